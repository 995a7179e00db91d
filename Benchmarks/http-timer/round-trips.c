// Times HTTP/1.1 round trips with nothing of an interpreter in the way, so a server's figure is the server's and the
// kernel's: `round-trips PORT METHOD PATH BODY|- new|kept CALLS MUST-CONTAIN` prints "p50 p99" in milliseconds.
// "new" opens a TCP connection per call (and closes it once the answer is read), "kept" sends every call on one.
// Every answer must be 200, with a Content-Length, and contain MUST-CONTAIN. A last argument `all` adds a second line:
// every timed call in milliseconds, so that several runs can be pooled.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static int port;
static char answer[1 << 20];

static int open_connection(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) { perror("round-trips: connect"); exit(2); }
    return s;
}

// Sends the request and reads one whole answer; returns its status, or -1 when the connection ended first.
static int round_trip(int s, const char *request, size_t length, const char **body) {
    if (write(s, request, length) != (ssize_t)length) return -1;
    size_t got = 0; long whole = -1; char *end = NULL;
    for (;;) {
        ssize_t n = read(s, answer + got, sizeof answer - got - 1);
        if (n <= 0) return -1;
        got += (size_t)n; answer[got] = 0;
        if (!end && (end = strstr(answer, "\r\n\r\n"))) {
            char *field = strcasestr(answer, "\ncontent-length:");
            if (!field || field > end) { fprintf(stderr, "round-trips: no Content-Length\n"); exit(2); }
            whole = (end + 4 - answer) + atol(field + 16);
            *body = end + 4;
        }
        if (end && (long)got >= whole) return atoi(answer + 9);
    }
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 8 && !(argc == 9 && strcmp(argv[8], "all") == 0)) {
        fprintf(stderr, "usage: round-trips PORT METHOD PATH BODY|- new|kept CALLS MUST-CONTAIN [all]\n");
        return 2;
    }
    port = atoi(argv[1]);
    const char *method = argv[2], *path = argv[3], *body = strcmp(argv[4], "-") ? argv[4] : NULL;
    int kept = strcmp(argv[5], "kept") == 0, calls = atoi(argv[6]);
    char request[8192];
    size_t length = body
        ? (size_t)snprintf(request, sizeof request, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: */*\r\n"
                           "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", method, path, port, strlen(body), body)
        : (size_t)snprintf(request, sizeof request, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: */*\r\n\r\n", method, path, port);
    double *times = calloc((size_t)calls, sizeof *times);
    int s = kept ? open_connection() : -1;
    for (int i = -20; i < calls; i++) {   // the first 20 are not timed
        struct timespec start, stop;
        clock_gettime(CLOCK_MONOTONIC, &start);
        if (!kept) s = open_connection();
        const char *got = NULL;
        int status = round_trip(s, request, length, &got);
        if (!kept) close(s);
        clock_gettime(CLOCK_MONOTONIC, &stop);
        if (status != 200 || !strstr(got, argv[7])) { fprintf(stderr, "round-trips: answered %d: %.300s\n", status, answer); return 1; }
        if (i >= 0) times[i] = (double)(stop.tv_sec - start.tv_sec) * 1e3 + (double)(stop.tv_nsec - start.tv_nsec) / 1e6;
    }
    qsort(times, (size_t)calls, sizeof *times, ascending);
    printf("%.4f %.4f\n", times[calls / 2], times[(calls * 99) / 100]);
    if (argc == 9) {
        for (int i = 0; i < calls; i++) printf(i ? " %.4f" : "%.4f", times[i]);
        printf("\n");
    }
    return 0;
}
