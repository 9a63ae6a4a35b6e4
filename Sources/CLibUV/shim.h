#ifndef REFRESHD_CLIBUV_SHIM_H
#define REFRESHD_CLIBUV_SHIM_H
#include <uv.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <sys/prctl.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// prctl is variadic, which Swift cannot call: makes the calling process a child subreaper.
static inline int refreshd_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/// A dead child not waited for yet, left so (WNOWAIT): its pid, 0 if none, -1 if no child at all.
static inline pid_t refreshd_peek_zombie(void) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid;
}

/// The resource usage of `pid`, a dead child not waited for yet, which stays so (WNOWAIT): its
/// own and that of the children it waited for (the kernel's RUSAGE_BOTH of the zombie). The raw
/// waitid, whose fifth argument glibc's wrapper does not pass. 0, or -1 if it has not exited.
static inline int refreshd_peek_exit_usage(pid_t pid, struct rusage *usage) {
    siginfo_t info;
    info.si_pid = 0;
    if (syscall(SYS_waitid, P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT, usage) != 0) return -1;
    return info.si_pid == pid ? 0 : -1;
}

/// prlimit(2) needs _GNU_SOURCE, which Swift's Glibc module does not define: sets another
/// process's RLIMIT_DATA (soft and hard) to `bytes`. 0, or -1 with errno.
static inline int refreshd_limit_data(pid_t pid, unsigned long long bytes) {
    struct rlimit limit = { .rlim_cur = bytes, .rlim_max = bytes };
    return (int)syscall(SYS_prlimit64, pid, RLIMIT_DATA, &limit, NULL);
}
#endif
