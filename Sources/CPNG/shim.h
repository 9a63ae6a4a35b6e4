#ifndef REFRESHD_CPNG_SHIM_H
#define REFRESHD_CPNG_SHIM_H
// libpng (Debian's libpng-dev) with its errors turned into return values: libpng reports a fatal
// error by longjmp to png_jmpbuf, which Swift cannot set, so each call that can fail goes through
// a small function below that sets the jump point and returns 0 with the message kept.
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <png.h>

typedef struct {
    png_structp png;
    png_infop info;
    int writing;
    char message[256];
} rd_png;

static void rd_png_error(png_structp png, png_const_charp message) {
    rd_png *p = (rd_png *)png_get_error_ptr(png);
    snprintf(p->message, sizeof p->message, "%s", message ? message : "unknown libpng error");
    png_longjmp(png, 1);
}

static void rd_png_warning(png_structp png, png_const_charp message) {
    (void)png; (void)message;
}

/// Reads the header. Rows are then RGBA, 8 bits per channel, whatever the file's format.
static inline int rd_png_decoder_open(rd_png *p, FILE *file, unsigned int max_side) {
    memset(p, 0, sizeof *p);
    p->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, p, rd_png_error, rd_png_warning);
    if (p->png == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    p->info = png_create_info_struct(p->png);
    if (p->info == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_set_user_limits(p->png, max_side, max_side);
    png_init_io(p->png, file);
    png_read_info(p->png, p->info);
    return 1;
}

static inline unsigned int rd_png_width(rd_png *p) { return png_get_image_width(p->png, p->info); }
static inline unsigned int rd_png_height(rd_png *p) { return png_get_image_height(p->png, p->info); }
static inline int rd_png_interlaced(rd_png *p) {
    return png_get_interlace_type(p->png, p->info) != PNG_INTERLACE_NONE;
}

/// The eXIf chunk's bytes (a TIFF structure) if the file has one before its image data.
static inline unsigned int rd_png_exif(rd_png *p, unsigned char **exif) {
    *exif = NULL;
#ifdef PNG_eXIf_SUPPORTED
    png_uint_32 length = 0;
    if (png_get_eXIf_1(p->png, p->info, &length, exif) == 0) { *exif = NULL; return 0; }
    return length;
#else
    return 0;
#endif
}

/// Sets the transforms to 8-bit RGBA and starts reading. Returns the number of passes (1, or 7
/// for an Adam7-interlaced file), 0 on error.
static inline int rd_png_decoder_start(rd_png *p) {
    if (setjmp(png_jmpbuf(p->png))) return 0;
    int color = png_get_color_type(p->png, p->info);
    int depth = png_get_bit_depth(p->png, p->info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(p->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(p->png);
    if (png_get_valid(p->png, p->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(p->png);
    if (depth == 16) png_set_strip_16(p->png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(p->png);
    png_set_filler(p->png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(p->png);
    png_read_update_info(p->png, p->info);
    return passes;
}

static inline int rd_png_decoder_read(rd_png *p, unsigned char *row) {
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_read_row(p->png, row, NULL);
    return 1;
}

static inline int rd_png_decoder_finish(rd_png *p) {
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_read_end(p->png, NULL);
    return 1;
}

/// Starts writing an 8-bit RGB PNG; interlaced asks Adam7. Returns the passes, 0 on error.
static inline int rd_png_encoder_start(rd_png *p, FILE *file, unsigned int width, unsigned int height,
                                       int interlaced) {
    memset(p, 0, sizeof *p);
    p->writing = 1;
    p->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, p, rd_png_error, rd_png_warning);
    if (p->png == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    p->info = png_create_info_struct(p->png);
    if (p->info == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_init_io(p->png, file);
    png_set_IHDR(p->png, p->info, width, height, 8, PNG_COLOR_TYPE_RGB,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p->png, p->info);
    return interlaced ? png_set_interlace_handling(p->png) : 1;
}

/// Starts writing a 1-bit grayscale, non-interlaced PNG (rows of (width + 7) / 8 bytes): huge
/// images in tiny files, for tests of decode cost. Returns 1, 0 on error.
static inline int rd_png_encoder_start_bilevel(rd_png *p, FILE *file, unsigned int width, unsigned int height) {
    memset(p, 0, sizeof *p);
    p->writing = 1;
    p->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, p, rd_png_error, rd_png_warning);
    if (p->png == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    p->info = png_create_info_struct(p->png);
    if (p->info == NULL) { snprintf(p->message, sizeof p->message, "out of memory"); return 0; }
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_init_io(p->png, file);
    png_set_IHDR(p->png, p->info, width, height, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p->png, p->info);
    return 1;
}

static inline int rd_png_encoder_write(rd_png *p, const unsigned char *row) {
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_write_row(p->png, row);
    return 1;
}

static inline int rd_png_encoder_finish(rd_png *p) {
    if (setjmp(png_jmpbuf(p->png))) return 0;
    png_write_end(p->png, NULL);
    return 1;
}

static inline void rd_png_close(rd_png *p) {
    if (p->png == NULL) return;
    if (p->writing) png_destroy_write_struct(&p->png, p->info ? &p->info : NULL);
    else png_destroy_read_struct(&p->png, p->info ? &p->info : NULL, NULL);
    p->png = NULL;
    p->info = NULL;
}

#endif
