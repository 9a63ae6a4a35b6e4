// The dashboard's files (the OpenAPI document's own part, the script, the style sheet, the
// icon), compiled into the binary: each its bytes and their count (no terminating NUL).
#ifndef REFRESHD_WEB_ASSETS_H
#define REFRESHD_WEB_ASSETS_H

#include <stddef.h>

/// One file's bytes: constant data of the binary, never freed.
typedef struct {
    const unsigned char *bytes;
    size_t count;
} refreshd_asset;

extern const refreshd_asset refreshd_openapi_json;
extern const refreshd_asset refreshd_dashboard_js;
extern const refreshd_asset refreshd_dashboard_css;
extern const refreshd_asset refreshd_favicon_svg;

#endif
