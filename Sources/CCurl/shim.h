#ifndef REFRESHD_CCURL_SHIM_H
#define REFRESHD_CCURL_SHIM_H
// libcurl (Debian's libcurl4-openssl-dev) for the failure notifications' webhook POSTs. Its
// options are set through a variadic function, which Swift cannot call: the calls refreshd makes
// are the small functions below, so every option a webhook gets is set here, in one place.
#include <curl/curl.h>

/// Reads the answer's body and drops it: a receiver cannot make refreshd keep its answer.
static size_t rd_curl_drop_body(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

/// One POST of `body` to `url` (http:// or https:// only, redirects not followed, no proxy from
/// the environment, no signals), given up after `timeout_ms` in all. `error` (CURL_ERROR_SIZE
/// bytes) gets curl's words for a failure. Returns the first option curl refused, or CURLE_OK.
static inline CURLcode rd_curl_prepare_post(CURL *easy, const char *url, const char *body, long body_length,
                                            struct curl_slist *headers, long timeout_ms, char *error) {
    CURLcode code;
#define RD_SET(option, value) if ((code = curl_easy_setopt(easy, option, value)) != CURLE_OK) return code
    RD_SET(CURLOPT_ERRORBUFFER, error);
    RD_SET(CURLOPT_NOSIGNAL, 1L);
    RD_SET(CURLOPT_PROTOCOLS_STR, "http,https");
    RD_SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    RD_SET(CURLOPT_FOLLOWLOCATION, 0L);
    RD_SET(CURLOPT_PROXY, "");
    RD_SET(CURLOPT_URL, url);
    RD_SET(CURLOPT_POST, 1L);
    RD_SET(CURLOPT_POSTFIELDSIZE, body_length);
    RD_SET(CURLOPT_COPYPOSTFIELDS, body);
    RD_SET(CURLOPT_HTTPHEADER, headers);
    RD_SET(CURLOPT_TIMEOUT_MS, timeout_ms);
    RD_SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    RD_SET(CURLOPT_WRITEFUNCTION, rd_curl_drop_body);
#undef RD_SET
    return CURLE_OK;
}

/// The answer's HTTP status (0 when there was none).
static inline long rd_curl_status(CURL *easy) {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/// The result of a transfer curl_multi_info_read reports done (CURLE_OK when it is no such report).
static inline CURLcode rd_curl_done_result(CURLMsg *message) {
    return message->msg == CURLMSG_DONE ? message->data.result : CURLE_OK;
}

#endif
