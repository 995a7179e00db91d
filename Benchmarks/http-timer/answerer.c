// The floor of a state read on this machine: one thread, one epoll loop on loopback, and one fixed answer (a body of
// SIZE bytes) written for every request header read, kept-alive or not as the client asks (the client closes). It
// does nothing a server could skip: no thread or task per connection, no parsing past the blank line, no routing.
// `answerer SIZE` prints its port. (A thread per connection, as this was first, answered a new connection 10-60 us
// later here: the thread's creation.)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define INPUT 65536

static char *answer;
static size_t answer_length;

// What each connection has read and not yet answered (a header may come in pieces).
struct connection { int fd; size_t got; char input[INPUT]; };

static void end(int loop, struct connection *c) {
    epoll_ctl(loop, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
}

static void serve(int loop, struct connection *c) {
    for (;;) {
        ssize_t n = read(c->fd, c->input + c->got, INPUT - c->got - 1);
        if (n < 0) return;                         // EAGAIN: all read for now
        if (n == 0 || c->got + (size_t)n >= INPUT - 1) return end(loop, c);
        c->got += (size_t)n; c->input[c->got] = 0;
        char *header_end;
        while ((header_end = strstr(c->input, "\r\n\r\n"))) {
            if (write(c->fd, answer, answer_length) != (ssize_t)answer_length) return end(loop, c);
            size_t used = (size_t)(header_end + 4 - c->input);
            memmove(c->input, header_end + 4, c->got - used + 1);
            c->got -= used;
        }
    }
}

int main(int argc, char **argv) {
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 600;
    answer = malloc(size + 256);
    answer_length = (size_t)sprintf(answer, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", size);
    memset(answer + answer_length, 'x', size);
    answer_length += size;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 256) || getsockname(s, (struct sockaddr *)&a, &length)) { perror("answerer"); return 2; }
    printf("%d\n", ntohs(a.sin_port)); fflush(stdout);
    int loop = epoll_create1(0);
    struct epoll_event listening = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(loop, EPOLL_CTL_ADD, s, &listening);
    struct epoll_event ready[64];
    for (;;) {
        int n = epoll_wait(loop, ready, 64, -1);
        for (int i = 0; i < n; i++) {
            if (ready[i].data.ptr) { serve(loop, ready[i].data.ptr); continue; }
            int fd;
            while ((fd = accept4(s, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct connection *c = malloc(sizeof *c);
                c->fd = fd; c->got = 0;
                struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(loop, EPOLL_CTL_ADD, fd, &e);
            }
        }
    }
}
