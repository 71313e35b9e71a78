/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Terminate checks through the kernel log: swiwarp logs every Terminate it
 * sends ("RX error layer L type T code C") and every one it receives
 * ("Terminate from peer: layer L type T code C").  kmsg_open() starts reading
 * /dev/kmsg at its end; kmsg_find_term() reads what was logged since and
 * reports the first Terminate line of the wanted kind.  Needs root (the lab
 * guests run tests as root).  Only for swiwarp; siw logs nothing like it.
 */
#ifndef ROBUST_KMSG_H
#define ROBUST_KMSG_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Reads the records logged since kmsg_open() (waiting up to ms for one to
 * show up).  sent: look for a Terminate we sent, else one we received.
 * Returns 1 and fills layer/type/code when found, 0 if none, -1 if unreadable.
 */
static inline int kmsg_find_term(int fd, int sent, int ms, int *layer, int *type, int *code)
{
	char rec[1024];
	const char *key = sent ? "RX error layer " : "Terminate from peer: layer ";
	int waited = 0;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		const char *p;

		if (n < 0) {
			if (waited >= ms)
				return 0;
			usleep(50000);
			waited += 50;
			continue;
		}
		rec[n] = 0;
		p = strstr(rec, key);
		if (p && sscanf(p + strlen(key), "%d type %d code %d", layer, type, code) == 3)
			return 1;
	}
}

#endif
