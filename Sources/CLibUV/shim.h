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
#include <spawn.h>
#include <fcntl.h>
#include <errno.h>

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

/// prlimit(2) needs _GNU_SOURCE, which Swift's Glibc module does not define: sets another
/// process's RLIMIT_DATA (soft and hard) to `bytes`. 0, or -1 with errno.
static inline int refreshd_limit_data(pid_t pid, unsigned long long bytes) {
    struct rlimit limit = { .rlim_cur = bytes, .rlim_max = bytes };
    return (int)syscall(SYS_prlimit64, pid, RLIMIT_DATA, &limit, NULL);
}

/// glibc declares it only with _GNU_SOURCE, which Swift's Glibc module does not define.
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *, const char *);

/// Starts a command job (issue 35): `posix_spawn`, which glibc does with
/// CLONE_VM|CLONE_VFORK, so nothing of refreshd's address space is copied (libuv 1.44's
/// `uv_spawn` forks, and the kernel copies the page tables of the whole process at each run).
/// The child leads a session of its own (setsid), has every signal at its default and none
/// blocked, /dev/null on fd 0, `out`, `err` and `results` on fds 1, 2 and 3, and `cwd` (if not
/// NULL) as its working directory; it is born in the calling process's cgroup. `path` is
/// executed as is (no PATH search). 0 and the pid, or the errno value (an exec failure too:
/// glibc reports it from the child before returning).
static inline int refreshd_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                                 const char *cwd, int out, int err, int results) {
    int source[3] = { out, err, results }, moved[3] = { -1, -1, -1 };
    /* A source below 4 would be overwritten by another's dup2: moved above first. */
    for (int i = 0; i < 3; i++) {
        if (source[i] >= 4) continue;
        moved[i] = fcntl(source[i], F_DUPFD_CLOEXEC, 4);
        if (moved[i] < 0) {
            int failure = errno;
            for (int j = 0; j < i; j++) if (moved[j] >= 0) close(moved[j]);
            return failure;
        }
        source[i] = moved[i];
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    int rc = posix_spawnattr_init(&attributes);
    if (rc == 0) {
        rc = posix_spawn_file_actions_init(&actions);
        if (rc == 0) {
            rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
                                                           | 0x80 /* POSIX_SPAWN_SETSID, a GNU flag */);
            if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
            if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
            for (int i = 0; i < 3 && rc == 0; i++) rc = posix_spawn_file_actions_adddup2(&actions, source[i], i + 1);
            if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
            if (rc == 0 && cwd != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, cwd);
            if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
            posix_spawn_file_actions_destroy(&actions);
        }
        posix_spawnattr_destroy(&attributes);
    }
    for (int i = 0; i < 3; i++) if (moved[i] >= 0) close(moved[i]);
    return rc;
}

/// pipe2(2) with O_CLOEXEC (a GNU function Swift's Glibc module does not declare). 0, or -1 with errno.
static inline int refreshd_pipe(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

/// Waits for `pid` if it has exited (WNOHANG), with what it used (`wait4`'s rusage: it and the
/// children it waited for). 1 with its exit status or terminating signal (the other 0), 0 while
/// it runs, -1 with errno.
static inline int refreshd_reap(pid_t pid, int *exit_status, int *term_signal, struct rusage *usage) {
    int status = 0;
    pid_t got = wait4(pid, &status, WNOHANG, usage);
    if (got <= 0) return got;
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    *term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return 1;
}
#endif
