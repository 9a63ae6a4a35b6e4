#ifndef REFRESHD_CLIBUV_SHIM_H
#define REFRESHD_CLIBUV_SHIM_H
#include <uv.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <sys/prctl.h>
#include <sys/xattr.h>

/// prctl is variadic, which Swift cannot call: makes the calling process a child subreaper.
static inline int refreshd_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}
#endif
