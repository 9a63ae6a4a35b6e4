// The dashboard's files as byte arrays, read by the compiler with C23's `#embed` (the files sit
// beside this one; clang lists them in its dependency file, so editing one rebuilds this).
//
// Why C and not SwiftPM's `embedInCode`: that writes each file as a Swift array literal of one
// integer per byte, and the optimizer took about 9 s of a cold release build over them (the
// 51 KB OpenAPI document alone 7.8 s), on the build's serial tail. `#embed` takes milliseconds.
#pragma clang diagnostic ignored "-Wc23-extensions"

#include "CWebAssets.h"

static const unsigned char openapi_json[] = {
#embed "openapi.json"
};
static const unsigned char dashboard_js[] = {
#embed "dashboard.js"
};
static const unsigned char dashboard_css[] = {
#embed "dashboard.css"
};
static const unsigned char favicon_svg[] = {
#embed "favicon.svg"
};

const refreshd_asset refreshd_openapi_json = {openapi_json, sizeof(openapi_json)};
const refreshd_asset refreshd_dashboard_js = {dashboard_js, sizeof(dashboard_js)};
const refreshd_asset refreshd_dashboard_css = {dashboard_css, sizeof(dashboard_css)};
const refreshd_asset refreshd_favicon_svg = {favicon_svg, sizeof(favicon_svg)};
