// The floor for a libuv dispatcher: one uv_timer_t per request, nothing else.
//
//   uv_timers dispatch N SPREAD_MS MARGIN_MS   N timers spread over SPREAD_MS, MARGIN_MS from now
//   uv_timers memory N                         RSS growth of N armed timers, due tomorrow
//   uv_timers idle N SECONDS                   N timers due tomorrow, SECONDS of real time idle
//
// Prints one JSON object on stdout. The timers live in one calloc'd array (the cheapest layout:
// 152 bytes per uv_timer_t, plus 8 bytes for the request's earliest date), so its memory figure is
// a lower bound for anything built on uv_timer_t. Each timer is armed with the delay from the wall
// clock to its earliest date, rounded up to the next millisecond, after uv_update_time (libuv's
// cached loop time would otherwise make it fire early by the setup time). A timer that still fires
// before its earliest date (monotonic and wall clocks disagree by a fraction of a millisecond) is
// re-armed for 1 ms, as a scheduler honouring "never before the earliest date" must do.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <uv.h>

static uv_timer_t *timers;
static int64_t *earliest_ms;  // per request: its earliest begin date, ms since the epoch (wall clock)
static int64_t *launched_ns;  // per request: when its callback ran, ns since the epoch
static size_t count, fired, rearmed;

static int64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static long status_field(const char *path, const char *name) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    size_t len = strlen(name);
    long value = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            value = strtol(line + len + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return value;
}

static long rss_bytes(void) { return status_field("/proc/self/status", "VmRSS") * 1024; }

static void on_timer(uv_timer_t *t) {
    size_t i = (size_t)(t - timers);
    int64_t now = realtime_ns();
    if (now < earliest_ms[i] * 1000000) {  // early by a fraction of a millisecond: wait
        rearmed++;
        uv_timer_start(t, on_timer, 1, 0);
        return;
    }
    launched_ns[i] = now;
    fired++;
}

static void arm(uv_loop_t *loop, size_t i) {
    uv_update_time(loop);
    int64_t delay_ns = earliest_ms[i] * 1000000 - realtime_ns();
    uint64_t delay = delay_ns <= 0 ? 0 : (uint64_t)((delay_ns + 999999) / 1000000);
    uv_timer_init(loop, &timers[i]);
    uv_timer_start(&timers[i], on_timer, delay, 0);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(const int64_t *sorted, size_t n, double p) {
    size_t k = (size_t)(n * p + 0.999999999);
    if (k == 0) k = 1;
    if (k > n) k = n;
    return sorted[k - 1] / 1e6;
}

static int dispatch(size_t n, int64_t spread_ms, int64_t margin_ms) {
    uv_loop_t *loop = uv_default_loop();
    count = n;
    timers = calloc(n, sizeof *timers);
    earliest_ms = calloc(n, sizeof *earliest_ms);
    launched_ns = calloc(n, sizeof *launched_ns);
    double wall0 = monotonic_s(), cpu0 = cpu_s();
    int64_t base = realtime_ns() / 1000000 + margin_ms;
    for (size_t i = 0; i < n; i++) earliest_ms[i] = base + (int64_t)i * spread_ms / (int64_t)n;
    for (size_t i = 0; i < n; i++) arm(loop, i);
    double cpu_armed = cpu_s();
    int overran = realtime_ns() / 1000000 > base;
    uv_run(loop, UV_RUN_DEFAULT);
    double cpu1 = cpu_s(), wall1 = monotonic_s();

    int64_t *late = malloc(n * sizeof *late), last = 0;
    size_t early = 0;
    for (size_t i = 0; i < n; i++) {
        late[i] = launched_ns[i] - earliest_ms[i] * 1000000;
        if (late[i] < 0) early++;
        if (launched_ns[i] > last) last = launched_ns[i];
    }
    qsort(late, n, sizeof *late, cmp64);
    printf("{\"impl\": \"c-libuv\", \"bench\": \"dispatch\", \"n\": %zu, \"launched\": %zu, "
           "\"spread_s\": %.3f, \"cpu_s\": %.4f, \"cpu_submit_s\": %.4f, \"cpu_dispatch_s\": %.4f, "
           "\"wall_s\": %.3f, \"dispatch_wall_s\": %.3f, \"rate_per_s\": %.1f, "
           "\"lateness_p50_ms\": %.4f, \"lateness_p99_ms\": %.4f, \"lateness_max_ms\": %.4f, "
           "\"lateness_min_ms\": %.4f, \"early_launches\": %zu, \"rearmed\": %zu, \"setup_overran\": %s}\n",
           n, fired, spread_ms / 1e3, cpu1 - cpu0, cpu_armed - cpu0, cpu1 - cpu_armed, wall1 - wall0,
           (last - base * 1000000) / 1e9, n / (spread_ms / 1e3),
           pct(late, n, 0.5), pct(late, n, 0.99), late[n - 1] / 1e6, late[0] / 1e6, early, rearmed,
           overran ? "true" : "false");
    return fired == n ? 0 : 1;
}

/* n timers, one per request, all due this time tomorrow. */
static void arm_all_tomorrow(uv_loop_t *loop, size_t n) {
    timers = calloc(n, sizeof *timers);
    earliest_ms = calloc(n, sizeof *earliest_ms);
    int64_t tomorrow = realtime_ns() / 1000000 + 86400000;
    for (size_t i = 0; i < n; i++) {
        earliest_ms[i] = tomorrow;
        arm(loop, i);
    }
    uv_run(loop, UV_RUN_NOWAIT);
}

static int memory(size_t n) {
    uv_loop_t *loop = uv_default_loop();
    long rss0 = rss_bytes();
    double cpu0 = cpu_s();
    arm_all_tomorrow(loop, n);
    long rss1 = rss_bytes();
    printf("{\"impl\": \"c-libuv\", \"bench\": \"memory\", \"n\": %zu, \"pending\": %zu, "
           "\"rss_baseline_bytes\": %ld, \"pending_bytes_per_request\": %.1f, "
           "\"total_bytes_per_request\": %.1f, \"sizeof_uv_timer_t\": %zu, \"cpu_submit_s\": %.4f}\n",
           n, n, rss0, (double)(rss1 - rss0) / n, (double)(rss1 - rss0) / n, sizeof(uv_timer_t),
           cpu_s() - cpu0);
    return 0;
}

static void end_window(uv_timer_t *t) { uv_stop(t->loop); }

static int idle(size_t n, int seconds) {
    uv_loop_t *loop = uv_default_loop();
    arm_all_tomorrow(loop, n);
    // The window's end is one more timer on the same loop: its wake-up is the only one expected.
    uv_timer_t window;
    uv_timer_init(loop, &window);
    long vol0 = status_field("/proc/self/status", "voluntary_ctxt_switches");
    long invol0 = status_field("/proc/self/status", "nonvoluntary_ctxt_switches");
    double cpu0 = cpu_s();
    uv_update_time(loop);
    uv_timer_start(&window, end_window, (uint64_t)seconds * 1000, 0);
    uv_run(loop, UV_RUN_DEFAULT);
    double cpu1 = cpu_s();
    long vol1 = status_field("/proc/self/status", "voluntary_ctxt_switches");
    long invol1 = status_field("/proc/self/status", "nonvoluntary_ctxt_switches");
    printf("{\"impl\": \"c-libuv\", \"bench\": \"idle\", \"n\": %zu, \"seconds\": %d, "
           "\"threads\": %ld, \"loop_voluntary_switches\": %ld, \"loop_nonvoluntary_switches\": %ld, "
           "\"process_voluntary_switches\": %ld, \"cpu_s\": %.4f}\n",
           n, seconds, status_field("/proc/self/status", "Threads"), vol1 - vol0, invol1 - invol0,
           vol1 - vol0, cpu1 - cpu0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "dispatch") == 0)
        return dispatch(strtoull(argv[2], NULL, 10), strtoll(argv[3], NULL, 10), strtoll(argv[4], NULL, 10));
    if (argc >= 3 && strcmp(argv[1], "memory") == 0) return memory(strtoull(argv[2], NULL, 10));
    if (argc >= 4 && strcmp(argv[1], "idle") == 0) return idle(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    fprintf(stderr, "usage: uv_timers dispatch N SPREAD_MS MARGIN_MS | memory N | idle N SECONDS\n");
    return 2;
}
