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
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>
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
extern int clone(int (*)(void *), void *, int, void *, ...);

/* linux/sched.h's values; glibc's sched.h has the first two only with _GNU_SOURCE. */
#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#endif
#ifndef CLONE_VFORK
#define CLONE_VFORK 0x00004000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/// clone3's argument as Linux 5.7 has it (`cgroup` is its last field), spelt out so that the
/// shim does not depend on the version of the kernel headers installed.
struct refreshd_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
};

/// What the child of `refreshd_spawn` does, prepared by the parent (the child allocates nothing:
/// it shares refreshd's memory until its exec), and where it reports.
struct refreshd_spawn_plan {
    const char *path;
    char *const *argv;
    /// `/bin/sh path argv[1]...`, for a file without a `#!` line (ENOEXEC), as execvp does.
    char *const *shell_argv;
    char *const *envp;
    const char *cwd;
    /// The ends for fds 1, 2 and 3, all above 3.
    int sources[3];
    /// The run cgroup's `cgroup.procs` (opened by the parent), which the child writes itself
    /// into first where clone3 could not start it there; -1 otherwise.
    int cgroup_procs;
    /// Set by the child: the errno value of what failed (it then exits), and whether it moved
    /// itself into the cgroup.
    volatile int error;
    volatile int moved;
};

/// The child of a spawn, on a stack of its own in refreshd's memory, refreshd's thread stopped
/// (CLONE_VFORK) until it execs or exits: only system calls, as glibc's posix_spawn child does.
/// Every signal at its default (through the kernel's own call, so glibc's internal ones too)
/// before any is unblocked: a signal between the unblocking and the exec would otherwise run a
/// handler of refreshd's (libuv's) in the child, on refreshd's memory.
static inline int refreshd_spawn_child(void *argument) {
    struct refreshd_spawn_plan *plan = argument;
    struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } defaults = { SIG_DFL, 0, NULL, 0 };
    uint64_t none = 0;
    if (plan->cgroup_procs >= 0) plan->moved = write(plan->cgroup_procs, "0", 1) == 1;
    for (int number = 1; number <= 64; number++) {
        if (number != SIGKILL && number != SIGSTOP) syscall(SYS_rt_sigaction, number, &defaults, NULL, 8);
    }
    if (setsid() < 0) goto failed;
    for (int i = 0; i < 3; i++) if (dup2(plan->sources[i], i + 1) < 0) goto failed;
    int null = open("/dev/null", O_RDONLY);
    if (null < 0) goto failed;
    if (null != 0) {
        if (dup2(null, 0) < 0) goto failed;
        close(null);
    }
    if (plan->cwd != NULL && chdir(plan->cwd) < 0) goto failed;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
    execve(plan->path, plan->argv, plan->envp);
    if (errno == ENOEXEC) execve("/bin/sh", plan->shell_argv, plan->envp);
failed:
    plan->error = errno;
    _exit(127);
}

/// clone3(2), which glibc 2.36 does not export, with the child on the stack `args` gives: the
/// child calls `child(argument)`, which never returns (it execs or exits). The child's pid, or
/// -errno; -ENOSYS where no assembly is written for the machine (x86-64 only so far).
static inline long refreshd_clone3(struct refreshd_clone_args *args, int (*child)(void *), void *argument) {
#if defined(__x86_64__)
    long result;
    register long function __asm__("r12") = (long)child;
    register long value __asm__("r13") = (long)argument;
    __asm__ __volatile__(
        "syscall\n\t"
        "testq %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        "xorl %%ebp, %%ebp\n\t"
        "movq %%r13, %%rdi\n\t"
        "callq *%%r12\n\t"
        "movl %%eax, %%edi\n\t"
        "movl $60, %%eax\n\t"
        "syscall\n\t"
        "hlt\n"
        "1:"
        : "=a"(result)
        : "0"((long)SYS_clone3), "D"(args), "S"(sizeof *args), "r"(function), "r"(value)
        : "rcx", "r11", "memory", "cc");
    return result;
#else
    (void)args; (void)child; (void)argument;
    return -ENOSYS;
#endif
}

/// Starts a command job (issue 35), as glibc's posix_spawn does but into a cgroup: a child
/// sharing refreshd's memory (CLONE_VM), refreshd's thread stopped until the child's exec
/// (CLONE_VFORK), so nothing of refreshd's address space is copied. The child leads a session
/// of its own (setsid), has every signal at its default and none blocked, /dev/null on fd 0,
/// `out`, `err` and `results` on fds 1, 2 and 3, and `cwd` (if not NULL) as its working
/// directory. `path` is executed as is (no PATH search); a file without a `#!` line runs
/// through /bin/sh, as execvp does.
///
/// With `cgroup` (a cgroup directory's fd, else -1) the child is born in that cgroup:
/// clone3 with CLONE_INTO_CGROUP (Linux 5.7); where that is refused (ENOSYS, E2BIG, EINVAL,
/// EPERM: an older kernel, a seccomp filter, another machine than x86-64), glibc's clone and
/// the child writes itself into the cgroup's `cgroup.procs` before anything else. Either way no
/// thread of refreshd's ever enters the cgroup. `*in_cgroup` says whether the child got there.
///
/// 0 and the pid, or the errno value (an exec failure too: the child reports it before exiting,
/// and is waited for here).
static inline int refreshd_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                                 const char *cwd, int out, int err, int results, int cgroup, int *in_cgroup) {
    enum { stack_size = 64 * 1024 };
    struct refreshd_spawn_plan plan = { .path = path, .argv = argv, .envp = envp, .cwd = cwd,
                                        .sources = { out, err, results }, .cgroup_procs = -1 };
    int moved[3] = { -1, -1, -1 }, failure = 0;
    *in_cgroup = 0;
    /* A source below 4 would be overwritten by another's dup2: moved above first. */
    for (int i = 0; i < 3; i++) {
        if (plan.sources[i] >= 4) continue;
        moved[i] = fcntl(plan.sources[i], F_DUPFD_CLOEXEC, 4);
        if (moved[i] < 0) {
            failure = errno;
            for (int j = 0; j < i; j++) if (moved[j] >= 0) close(moved[j]);
            return failure;
        }
        plan.sources[i] = moved[i];
    }
    size_t count = 0;
    while (argv[count] != NULL) count++;
    char **shell = malloc((count + 2) * sizeof(char *));
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (shell == NULL || stack == MAP_FAILED) {
        failure = ENOMEM;
    } else {
        shell[0] = "/bin/sh";
        shell[1] = (char *)path;
        for (size_t i = 1; i <= count; i++) shell[i + 1] = argv[i];  /* with argv's NULL */
        plan.shell_argv = shell;
        /* Every signal blocked in this thread (glibc's internal ones too) until the child has
           set its own to their defaults: none may run a handler in the child. */
        uint64_t all = ~(uint64_t)0, old = 0;
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
        long child = -ENOSYS;
        if (cgroup >= 0) {
            struct refreshd_clone_args args = {
                .flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                .stack = (uint64_t)(uintptr_t)stack, .stack_size = stack_size, .cgroup = (uint64_t)cgroup };
            child = refreshd_clone3(&args, refreshd_spawn_child, &plan);
            if (child > 0) *in_cgroup = 1;
        }
        if (child == -ENOSYS || child == -E2BIG || child == -EINVAL || child == -EPERM) {
            if (cgroup >= 0) plan.cgroup_procs = openat(cgroup, "cgroup.procs", O_WRONLY | O_CLOEXEC);
            child = clone(refreshd_spawn_child, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
            if (child < 0) child = -errno;
            if (child > 0) *in_cgroup = plan.moved;
            if (plan.cgroup_procs >= 0) close(plan.cgroup_procs);
        }
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
        if (child < 0) {
            failure = (int)-child;
        } else if (plan.error != 0) {
            failure = plan.error;
            waitpid((pid_t)child, NULL, 0);
        } else {
            *pid = (pid_t)child;
        }
    }
    if (stack != MAP_FAILED) munmap(stack, stack_size);
    free(shell);
    for (int i = 0; i < 3; i++) if (moved[i] >= 0) close(moved[i]);
    return failure;
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
