// The floor of a state read on this machine: accepts on loopback, a thread per connection, and writes one fixed
// answer (a body of SIZE bytes) for every request header it reads, kept-alive or not as the client asks. No server
// answers faster than this here. `answerer SIZE` prints its port.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static char *answer;
static size_t answer_length;

static void *serve(void *argument) {
    int c = (int)(long)argument, one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char input[65536]; size_t got = 0;
    for (;;) {
        ssize_t n = read(c, input + got, sizeof input - got - 1);
        if (n <= 0) break;
        got += (size_t)n; input[got] = 0;
        char *end;
        while ((end = strstr(input, "\r\n\r\n"))) {
            if (write(c, answer, answer_length) != (ssize_t)answer_length) goto done;
            size_t used = (size_t)(end + 4 - input);
            memmove(input, end + 4, got - used + 1);
            got -= used;
        }
    }
done:
    close(c);
    return NULL;
}

int main(int argc, char **argv) {
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 600;
    answer = malloc(size + 256);
    answer_length = (size_t)sprintf(answer, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", size);
    memset(answer + answer_length, 'x', size);
    answer_length += size;
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64) || getsockname(s, (struct sockaddr *)&a, &length)) { perror("answerer"); return 2; }
    printf("%d\n", ntohs(a.sin_port)); fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        pthread_t t;
        if (pthread_create(&t, NULL, serve, (void *)(long)c) == 0) pthread_detach(t); else close(c);
    }
}
