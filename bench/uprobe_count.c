/* uprobe_count BINARY HEXOFF -- CMD [ARG...]: runs CMD with one counting
 * uprobe at file offset HEXOFF of BINARY (the kernel's uprobe PMU: no BPF,
 * no tracefs) and prints "hits N" on stderr: the bare trap cost of one
 * probe site, for bench/probe_sites.sh. Needs root. */
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	unsigned long long hits = 0;
	int type, p[2], st;
	FILE *f;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: uprobe_count BINARY HEXOFF -- CMD [ARG...]\n");
		return 2;
	}
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "uprobe_count: no uprobe PMU (/sys/bus/event_source/devices/uprobe/type)\n");
		return 1;
	}
	fclose(f);
	if (pipe(p))
		return 1;
	pid_t c = fork();
	if (c < 0)
		return 1;
	if (!c) {   /* waits until the probe is set, then runs CMD */
		char b;
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(p[0]);
	memset(&a, 0, sizeof(a));
	a.type = (unsigned)type;
	a.size = sizeof(a);
	a.config1 = (unsigned long)argv[1];
	a.config2 = strtoull(argv[2], NULL, 16);
	a.disabled = 1;
	a.enable_on_exec = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, c, -1, -1, 0);
	if (fd < 0) {
		perror("uprobe_count: perf_event_open");
		kill(c, SIGKILL);
		return 1;
	}
	if (write(p[1], "x", 1) != 1 || waitpid(c, &st, 0) < 0 ||
	    read(fd, &hits, sizeof(hits)) != sizeof(hits))
		return 1;
	fprintf(stderr, "hits %llu\n", hits);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
