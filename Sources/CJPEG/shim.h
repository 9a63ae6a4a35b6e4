#ifndef REFRESHD_CJPEG_SHIM_H
#define REFRESHD_CJPEG_SHIM_H
// libjpeg-turbo (Debian's libjpeg62-turbo-dev) with its errors turned into return values.
//
// libjpeg reports a fatal error by calling error_exit, which must not return. Swift cannot call
// setjmp, so every libjpeg call that can fail goes through one of the small functions below: each
// sets its own jump point, and error_exit formats the message into the context and jumps back
// there, so the function returns 0 and Swift reads the message. Warnings that mean the data is
// corrupt or cut short (libjpeg would otherwise fill the rest with gray) are fatal the same way.
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} rd_jpeg_error;

static void rd_jpeg_error_exit(j_common_ptr cinfo) {
    rd_jpeg_error *e = (rd_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->message);
    longjmp(e->jump, 1);
}

static void rd_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;
    switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF: case JWRN_HIT_MARKER: case JWRN_MUST_RESYNC: case JWRN_EXTRANEOUS_DATA:
    case JWRN_NOT_SEQUENTIAL: case JWRN_HUFF_BAD_CODE: case JWRN_BOGUS_PROGRESSION:
        rd_jpeg_error_exit(cinfo);
        break;
    default:
        cinfo->err->num_warnings++;
    }
}

static inline void rd_jpeg_error_init(rd_jpeg_error *e) {
    jpeg_std_error(&e->pub);
    e->pub.error_exit = rd_jpeg_error_exit;
    e->pub.emit_message = rd_jpeg_emit_message;
    e->message[0] = 0;
}

// --- Decoding --------------------------------------------------------------------------------

typedef struct {
    struct jpeg_decompress_struct cinfo;
    rd_jpeg_error err;
    int created;
} rd_jpeg_decoder;

/// Reads the header (and keeps APP1 markers, where EXIF lives). 1 on success, 0 on error.
static inline int rd_jpeg_decoder_open(rd_jpeg_decoder *d, FILE *file) {
    memset(d, 0, sizeof *d);
    d->cinfo.err = &d->err.pub;
    rd_jpeg_error_init(&d->err);
    if (setjmp(d->err.jump)) return 0;
    jpeg_create_decompress(&d->cinfo);
    d->created = 1;
    jpeg_stdio_src(&d->cinfo, file);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&d->cinfo, TRUE);
    return 1;
}

/// Whether libjpeg will buffer every DCT coefficient of the image (a full-image coefficient
/// array): a progressive file, or a sequential one whose first scan does not cover every
/// component (libjpeg's has_multiple_scans, decided in jdinput.c from the first SOS).
static inline int rd_jpeg_decoder_buffers_coefficients(rd_jpeg_decoder *d) {
    return d->cinfo.progressive_mode || d->cinfo.comps_in_scan < d->cinfo.num_components;
}

/// The bytes of that coefficient array: each component's blocks, rounded up to its sampling
/// factors as jdcoefct.c allocates them, 64 coefficients of sizeof(JCOEF) each. 0 for a file
/// that is decoded in a stream.
static inline unsigned long long rd_jpeg_decoder_coefficient_bytes(rd_jpeg_decoder *d) {
    if (!rd_jpeg_decoder_buffers_coefficients(d)) return 0;
    unsigned long long total = 0;
    for (int i = 0; i < d->cinfo.num_components; i++) {
        jpeg_component_info *c = &d->cinfo.comp_info[i];
        unsigned long long w = c->width_in_blocks, h = c->height_in_blocks;
        unsigned long long hs = c->h_samp_factor > 0 ? c->h_samp_factor : 1, vs = c->v_samp_factor > 0 ? c->v_samp_factor : 1;
        w = (w + hs - 1) / hs * hs;
        h = (h + vs - 1) / vs * vs;
        total += w * h * DCTSIZE2 * sizeof(JCOEF);
    }
    return total;
}

/// Starts decoding at scale_num/8 of the full size, as RGB. max_memory (bytes, 0 for none) is
/// libjpeg's own limit on its large buffers: beyond it, libjpeg fails ("backing store not
/// supported") instead of allocating.
static inline int rd_jpeg_decoder_start(rd_jpeg_decoder *d, unsigned int scale_num, long max_memory) {
    if (setjmp(d->err.jump)) return 0;
    if (max_memory > 0) d->cinfo.mem->max_memory_to_use = max_memory;
    d->cinfo.scale_num = scale_num;
    d->cinfo.scale_denom = 8;
    d->cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d->cinfo);
    return 1;
}

/// Reads the next scanline into row (output_width * 3 bytes).
static inline int rd_jpeg_decoder_read(rd_jpeg_decoder *d, unsigned char *row) {
    if (setjmp(d->err.jump)) return 0;
    JSAMPROW rows[1] = { row };
    if (jpeg_read_scanlines(&d->cinfo, rows, 1) != 1) {
        snprintf(d->err.message, sizeof d->err.message, "no scanline where one was expected");
        return 0;
    }
    return 1;
}

static inline int rd_jpeg_decoder_finish(rd_jpeg_decoder *d) {
    if (setjmp(d->err.jump)) return 0;
    jpeg_finish_decompress(&d->cinfo);
    return 1;
}

static inline void rd_jpeg_decoder_close(rd_jpeg_decoder *d) {
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    d->created = 0;
}

// --- Encoding --------------------------------------------------------------------------------

typedef struct {
    struct jpeg_compress_struct cinfo;
    rd_jpeg_error err;
    int created;
} rd_jpeg_encoder;

/// One sequential (not progressive) scan per component, Y then Cb then Cr: a legal baseline
/// layout that makes a decoder buffer every coefficient. Tests use it to build such files.
static const jpeg_scan_info rd_jpeg_component_scans[3] = {
    { 1, { 0 }, 0, 63, 0, 0 }, { 1, { 1 }, 0, 63, 0, 0 }, { 1, { 2 }, 0, 63, 0, 0 },
};

/// Starts an RGB JPEG; exif (may be NULL) is written as an APP1 marker. Baseline with
/// interleaved components, or with component_scans one sequential scan per component.
static inline int rd_jpeg_encoder_start_scans(rd_jpeg_encoder *e, FILE *file, unsigned int width,
                                              unsigned int height, int quality,
                                              const unsigned char *exif, unsigned int exif_length,
                                              int component_scans) {
    memset(e, 0, sizeof *e);
    e->cinfo.err = &e->err.pub;
    rd_jpeg_error_init(&e->err);
    if (setjmp(e->err.jump)) return 0;
    jpeg_create_compress(&e->cinfo);
    e->created = 1;
    jpeg_stdio_dest(&e->cinfo, file);
    e->cinfo.image_width = width;
    e->cinfo.image_height = height;
    e->cinfo.input_components = 3;
    e->cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality, TRUE);
    if (component_scans) {
        e->cinfo.scan_info = rd_jpeg_component_scans;
        e->cinfo.num_scans = 3;
    }
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif != NULL && exif_length > 0) jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, exif, exif_length);
    return 1;
}

static inline int rd_jpeg_encoder_start(rd_jpeg_encoder *e, FILE *file, unsigned int width,
                                        unsigned int height, int quality,
                                        const unsigned char *exif, unsigned int exif_length) {
    return rd_jpeg_encoder_start_scans(e, file, width, height, quality, exif, exif_length, 0);
}

static inline int rd_jpeg_encoder_write(rd_jpeg_encoder *e, const unsigned char *row) {
    if (setjmp(e->err.jump)) return 0;
    JSAMPROW rows[1] = { (JSAMPROW)row };
    jpeg_write_scanlines(&e->cinfo, rows, 1);
    return 1;
}

static inline int rd_jpeg_encoder_finish(rd_jpeg_encoder *e) {
    if (setjmp(e->err.jump)) return 0;
    jpeg_finish_compress(&e->cinfo);
    return 1;
}

static inline void rd_jpeg_encoder_close(rd_jpeg_encoder *e) {
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    e->created = 0;
}

#endif
