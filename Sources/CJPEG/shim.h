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

/// Starts decoding at scale_num/8 of the full size, as RGB.
static inline int rd_jpeg_decoder_start(rd_jpeg_decoder *d, unsigned int scale_num) {
    if (setjmp(d->err.jump)) return 0;
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

/// Starts a baseline RGB JPEG; exif (may be NULL) is written as an APP1 marker.
static inline int rd_jpeg_encoder_start(rd_jpeg_encoder *e, FILE *file, unsigned int width,
                                        unsigned int height, int quality,
                                        const unsigned char *exif, unsigned int exif_length) {
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
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif != NULL && exif_length > 0) jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, exif, exif_length);
    return 1;
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
