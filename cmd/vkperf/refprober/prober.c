/*
 * The reference prober of cmd/vkperf: the cheapest PING probe this machine
 * allows, to measure vkwatch's probe against. One thread per server; each
 * sleeps with clock_nanosleep to absolute deadlines one interval apart, then
 * makes one blocking write of PING and blocking reads up to the end of the
 * reply line, and notes the round trip (CLOCK_MONOTONIC around the write and
 * the read). Nothing else: no histogram while it runs, no output until it
 * ends.
 *
 * With -n it reads each reply at the next tick instead, without blocking,
 * as vkwatch's probe does: one wake-up per PING where the default has two
 * (the deadline, then the reply). The round trip is then the kernel's
 * receive timestamp of the reply (SO_TIMESTAMPNS) less CLOCK_REALTIME just
 * before the write; a reply not yet there at the next tick is read at the
 * one after, and no PING is written meanwhile. This mode is the cost
 * floor's second instrument: whether fewer wake-ups make a cheaper probe.
 *
 *   prober [-n] INTERVAL_US HOST:PORT...
 *
 * It runs until SIGTERM or SIGINT, then prints one line per server:
 *   HOST:PORT pings N p50_ns X mean_ns Y max_ns Z
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static long interval_ns;
static int next_tick; /* -n */

struct server {
	const char *addr;
	int fd;
	long *rtt; /* ns, one per answered PING */
	size_t n, cap;
	const char *err;
};

static int dial(const char *addr) {
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host)
		return -1;
	memcpy(host, addr, colon - addr);
	host[colon - addr] = 0;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		return -1;
	int fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (next_tick && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

static long ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

/* note keeps one round trip; -1 when out of memory (s->err says so). */
static int note(struct server *s, long rtt) {
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1 << 16;
		s->rtt = realloc(s->rtt, s->cap * sizeof *s->rtt);
		if (!s->rtt) {
			s->err = "out of memory";
			return -1;
		}
	}
	s->rtt[s->n++] = rtt;
	return 0;
}

/* sleep_until_next moves *next one interval on and sleeps until then. */
static void sleep_until_next(struct timespec *next) {
	next->tv_nsec += interval_ns;
	while (next->tv_nsec >= 1000000000L) {
		next->tv_nsec -= 1000000000L;
		next->tv_sec++;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
		;
}

/* received is the kernel's receive timestamp of m (SCM_TIMESTAMPNS), in ns
 * of CLOCK_REALTIME; 0 when m carries none. */
static long received(struct msghdr *m) {
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec t;
			memcpy(&t, CMSG_DATA(c), sizeof t);
			return ns(&t);
		}
	}
	return 0;
}

/* run_next_tick is -n: at each tick, the last reply is read without
 * blocking, then the next PING written; the thread wakes once per PING. */
static void *run_next_tick(void *arg) {
	struct server *s = arg;
	static const char ping[] = "*1\r\n$4\r\nPING\r\n";
	char buf[128];
	union {
		char b[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct timespec next, sent;
	int waiting = 0; /* a PING's reply line is not complete yet */
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stopping) {
		sleep_until_next(&next);
		while (waiting) {
			struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
			ssize_t k = recvmsg(s->fd, &m, MSG_DONTWAIT);
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break; /* not there yet: read at the next tick */
			if (k <= 0) {
				s->err = k == 0 ? "connection closed" : "read failed";
				return NULL;
			}
			if (buf[k - 1] != '\n')
				continue;
			waiting = 0;
			long at = received(&m);
			if (at == 0) {
				s->err = "reply without a receive timestamp";
				return NULL;
			}
			if (note(s, at - ns(&sent)) != 0)
				return NULL;
		}
		if (waiting)
			continue;
		clock_gettime(CLOCK_REALTIME, &sent);
		if (write(s->fd, ping, sizeof ping - 1) != sizeof ping - 1) {
			s->err = "write failed";
			return NULL;
		}
		waiting = 1;
	}
	return NULL;
}

static void *run(void *arg) {
	struct server *s = arg;
	static const char ping[] = "*1\r\n$4\r\nPING\r\n";
	char buf[128];
	struct timespec next, t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stopping) {
		sleep_until_next(&next);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (write(s->fd, ping, sizeof ping - 1) != sizeof ping - 1) {
			s->err = "write failed";
			return NULL;
		}
		for (;;) {
			ssize_t k = read(s->fd, buf, sizeof buf);
			if (k <= 0) {
				s->err = k == 0 ? "connection closed" : "read failed";
				return NULL;
			}
			if (buf[k - 1] == '\n')
				break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (note(s, ns(&t1) - ns(&t0)) != 0)
			return NULL;
		/* A PING that overran starts the schedule afresh, as vkwatch does. */
		if (ns(&t1) > ns(&next) + interval_ns)
			next = t1;
	}
	return NULL;
}

static int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		next_tick = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: prober [-n] INTERVAL_US HOST:PORT...\n");
		return 2;
	}
	interval_ns = atol(argv[1]) * 1000L;
	int n = argc - 2;
	struct server *srv = calloc(n, sizeof *srv);
	pthread_t *th = calloc(n, sizeof *th);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* The probe threads inherit the mask: only sigwait below sees the signal. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < n; i++) {
		srv[i].addr = argv[i + 2];
		srv[i].fd = dial(srv[i].addr);
		if (srv[i].fd < 0) {
			fprintf(stderr, "prober: cannot connect to %s\n", srv[i].addr);
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, next_tick ? run_next_tick : run, &srv[i]);
	int sig;
	sigwait(&set, &sig);
	stopping = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		struct server *s = &srv[i];
		if (s->err) {
			printf("%s error %s\n", s->addr, s->err);
			continue;
		}
		long sum = 0, max = 0;
		for (size_t j = 0; j < s->n; j++) {
			sum += s->rtt[j];
			if (s->rtt[j] > max)
				max = s->rtt[j];
		}
		qsort(s->rtt, s->n, sizeof *s->rtt, cmp);
		printf("%s pings %zu p50_ns %ld mean_ns %ld max_ns %ld\n", s->addr, s->n,
		       s->n ? s->rtt[s->n / 2] : 0, s->n ? sum / (long)s->n : 0, max);
	}
	return 0;
}
