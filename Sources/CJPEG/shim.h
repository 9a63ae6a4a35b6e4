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

/// libjpeg's progress monitor, called during every pass over the input, including the reading
/// of every scan of a multi-scan file inside jpeg_start_decompress: it stops a file with too
/// many scans (a progressive file can have thousands, each a pass over the image) and, through
/// should_stop (the run's expiration), a decode that is no longer wanted.
typedef struct {
    struct jpeg_progress_mgr pub;
    int (*should_stop)(void *context);
    void *context;
    int max_scans;
    int stopped;
} rd_jpeg_progress;

typedef struct {
    struct jpeg_decompress_struct cinfo;
    rd_jpeg_error err;
    rd_jpeg_progress progress;
    int created;
} rd_jpeg_decoder;

static void rd_jpeg_progress_monitor(j_common_ptr cinfo) {
    rd_jpeg_progress *p = (rd_jpeg_progress *)cinfo->progress;
    rd_jpeg_error *e = (rd_jpeg_error *)cinfo->err;
    if (cinfo->is_decompressor && p->max_scans > 0 &&
        ((j_decompress_ptr)cinfo)->input_scan_number > p->max_scans) {
        snprintf(e->message, sizeof e->message, "more than %d scans", p->max_scans);
        longjmp(e->jump, 1);
    }
    if (p->should_stop != NULL && p->should_stop(p->context)) {
        p->stopped = 1;
        snprintf(e->message, sizeof e->message, "stopped");
        longjmp(e->jump, 1);
    }
}

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
/// should_stop (may be NULL) is asked with context at every progress step of this call and of
/// the reads that follow; max_scans (0 for none) bounds the scans read.
static inline int rd_jpeg_decoder_start(rd_jpeg_decoder *d, unsigned int scale_num, long max_memory,
                                        int (*should_stop)(void *), void *context, int max_scans) {
    if (setjmp(d->err.jump)) return 0;
    if (max_memory > 0) d->cinfo.mem->max_memory_to_use = max_memory;
    d->progress.pub.progress_monitor = rd_jpeg_progress_monitor;
    d->progress.should_stop = should_stop;
    d->progress.context = context;
    d->progress.max_scans = max_scans;
    d->progress.stopped = 0;
    d->cinfo.progress = &d->progress.pub;
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

/// Starts an RGB JPEG; exif (may be NULL) is written as an APP1 marker. Baseline with
/// interleaved components, or with the scan script `scans` (num_scans of them; tests use it to
/// build the layouts that make a decoder buffer every coefficient, or read many scans). The
/// script must outlive the encoder.
static inline int rd_jpeg_encoder_start_scans(rd_jpeg_encoder *e, FILE *file, unsigned int width,
                                              unsigned int height, int quality,
                                              const unsigned char *exif, unsigned int exif_length,
                                              const jpeg_scan_info *scans, int num_scans) {
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
    if (scans != NULL && num_scans > 0) {
        e->cinfo.scan_info = scans;
        e->cinfo.num_scans = num_scans;
    }
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif != NULL && exif_length > 0) jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, exif, exif_length);
    return 1;
}

static inline int rd_jpeg_encoder_start(rd_jpeg_encoder *e, FILE *file, unsigned int width,
                                        unsigned int height, int quality,
                                        const unsigned char *exif, unsigned int exif_length) {
    return rd_jpeg_encoder_start_scans(e, file, width, height, quality, exif, exif_length, NULL, 0);
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
