/* SPDX-License-Identifier: MIT */
/*
 * proc.c - what soak reads of a process in /proc (its own, or the HTTP
 * server's): open descriptors and resident memory.
 */
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "soak.h"

int count_fds_of(int pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/fd");
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return pid ? n : n - 1; /* not our own directory's descriptor */
}

long rss_kib_of(int pid)
{
	char path[64], line[256];
	FILE *f;
	long kib = -1;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

int soak_pick_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}
