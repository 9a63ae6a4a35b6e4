// The floor for command jobs: posix_spawn + waitpid, at most CAP children at once.
//
//   spawn_loop N CAP [PROGRAM]     runs PROGRAM (default /bin/true) N times
//
// Prints one JSON object on stdout. No pipes, no process groups, no bookkeeping: whatever a job
// scheduler does around each spawn comes on top of this.
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>

extern char **environ;

static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(int who) {
    struct rusage u;
    getrusage(who, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn_loop N CAP [PROGRAM]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10), cap = strtol(argv[2], NULL, 10);
    char *program = argc > 3 ? argv[3] : "/bin/true";
    char *child_argv[] = {program, NULL};
    long started = 0, finished = 0, failed = 0;
    double t0 = monotonic_s(), cpu0 = cpu(RUSAGE_SELF);
    while (finished < n) {
        while (started < n && started - finished < cap) {
            pid_t pid;
            if (posix_spawn(&pid, program, NULL, NULL, child_argv, environ) != 0) {
                failed++;
                finished++;
            }
            started++;
        }
        int status;
        if (started - finished > 0 && waitpid(-1, &status, 0) > 0) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
            finished++;
        }
    }
    double drain = monotonic_s() - t0;
    printf("{\"impl\": \"c-posix_spawn\", \"bench\": \"commands\", \"n\": %ld, \"cap\": %ld, "
           "\"finished\": %ld, \"failed\": %ld, \"drain_s\": %.4f, \"launches_per_s\": %.1f, "
           "\"cpu_s\": %.4f, \"children_cpu_s\": %.4f}\n",
           n, cap, finished, failed, drain, n / drain, cpu(RUSAGE_SELF) - cpu0, cpu(RUSAGE_CHILDREN));
    return failed != 0;
}
