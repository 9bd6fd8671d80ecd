/* The await profile over synthetic dumps (no process): exact chains,
 * weights (samples x interval, a macro's branches sharing a sample), task
 * counts, ordering, the folded lines and the table. */
#include <stdlib.h>
#include <string.h>

#include "dump/await_profile.h"
#include "harness.h"

#define MS 1000000ull

static struct async_frame frame(const char *future, const char *file, unsigned line)
{
	return (struct async_frame){ .future = (char *)future, .file = (char *)file, .line = line };
}

/* Task A: app::a (src/a.rs:3) -> app::b (src/a.rs:9), awaiting Sleep. */
static struct async_frame a_frames[2];
static struct async_frame sel_frame[1], br0[1], br1[1];
static struct async_branch branches[3];

static void tasks_of(struct dump_task *t, bool b_parked)
{
	a_frames[0] = frame("app::a", "src/a.rs", 3);
	a_frames[1] = frame("app::b", "src/a.rs", 9);
	sel_frame[0] = frame("app::c", "src/c.rs", 12);
	br0[0] = frame("app::recv; x", "src/c.rs", 30);   /* a ';' in a name is no separator */
	br1[0] = frame("app::tick", NULL, 0);
	branches[0] = (struct async_branch){ .state = "pending",
		.stack = { .frames = br0, .n = 1, .leaf = "Recv" } };
	branches[1] = (struct async_branch){ .state = "done" };
	branches[2] = (struct async_branch){ .state = "pending",
		.stack = { .frames = br1, .n = 1, .leaf = "Sleep" } };
	t[0] = (struct dump_task){ .header = 0x10, .name = "app::a", .state = "idle",
		.stack = { .frames = a_frames, .n = 2, .leaf = "tokio::time::sleep::Sleep" } };
	if (b_parked)
		t[1] = (struct dump_task){ .header = 0x20, .name = "app::a", .state = "idle",
			.stack = { .frames = a_frames, .n = 2, .leaf = "tokio::time::sleep::Sleep" } };
	else
		t[1] = (struct dump_task){ .header = 0x20, .name = "app::w", .state = "running",
			.note = "running, not sampled" };
	t[2] = (struct dump_task){ .header = 0x30, .name = "app::c", .state = "idle",
		.stack = { .frames = sel_frame, .n = 1, .macro = "tokio::select!",
			   .branches = branches, .n_branches = 3 } };
}

static void test_chains(void)
{
	struct await_profile *p = await_profile__new(100 * MS);
	struct dump_task t[3];
	struct dump_result r = { .tasks = t, .n = 3 };
	size_t n;

	CHECK(p != NULL);
	if (!p)
		return;
	tasks_of(t, false);
	CHECK_EQ_U64(await_profile__add(p, &r), 0);
	tasks_of(t, true);
	CHECK_EQ_U64(await_profile__add(p, &r), 0);
	CHECK_EQ_U64(await_profile__samples(p), 2);
	const struct await_chain *c = await_profile__chains(p, &n);
	CHECK_EQ_U64(n, 4);
	if (n != 4)
		goto out;
	/* A twice and B once in A's chain: 300 ms, two tasks */
	CHECK_STR(c[0].stack, "app::a;app::a (src/a.rs:3);app::b (src/a.rs:9);tokio::time::sleep::Sleep");
	CHECK_EQ_U64(c[0].ns, 300 * MS);
	CHECK_EQ_U64(c[0].tasks, 2);
	CHECK_EQ_U64(c[0].task_samples, 3);
	/* ties in time by stack: C's two pending branches share each sample
	 * (50 ms each, twice), then B running once */
	CHECK_STR(c[1].stack, "app::c;app::c (src/c.rs:12);tokio::select! branch 0;"
			      "app::recv, x (src/c.rs:30);Recv");
	CHECK_EQ_U64(c[1].ns, 100 * MS);
	CHECK_STR(c[2].stack, "app::c;app::c (src/c.rs:12);tokio::select! branch 2;app::tick;Sleep");
	CHECK_EQ_U64(c[2].ns, 100 * MS);
	CHECK_EQ_U64(c[2].tasks, 1);
	CHECK_STR(c[3].stack, "app::w;(running, not sampled)");
	CHECK_EQ_U64(c[3].ns, 100 * MS);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_EQ_U64(await_profile__write_folded(p, f), 0);
	fclose(f);
	CHECK(buf && strstr(buf, "app::w;(running, not sampled) 100000000\n"));
	CHECK(buf && !strncmp(buf, "app::a;", 7));
	free(buf);
	f = open_memstream(&buf, &len);
	CHECK_EQ_U64(await_profile__write_table(p, f, 2), 0);
	fclose(f);
	CHECK(buf && strstr(buf, "2 samples, one every 100.0 ms, 4 chains"));
	/* shares of the 600 ms the three tasks spent over two samples */
	if (buf && !strstr(buf, "      2   50.0%   300.0 ms  app::a;"))
		fprintf(stderr, "table:\n%s", buf);
	CHECK(buf && strstr(buf, "      2   50.0%   300.0 ms  app::a;"));
	CHECK(buf && strstr(buf, "... and 2 more chains"));
	free(buf);
out:
	await_profile__free(p);
}

/* A sample split between three pending branches keeps all of its time:
 * the shares of 100 ms are 33333334, 33333333 and 33333333 ns, not three
 * 33333333 (1 ns a sample lost, 10 over 10 samples). */
static void test_split_exact(void)
{
	struct await_profile *p = await_profile__new(100 * MS);
	struct dump_task t[3];
	struct dump_result r = { .tasks = t, .n = 1 };
	const struct await_chain *c;
	uint64_t sum = 0;
	size_t n;

	CHECK(p != NULL);
	if (!p)
		return;
	tasks_of(t, false);
	t[0] = t[2];   /* app::c alone, its three branches pending */
	branches[1] = (struct async_branch){ .state = "pending",
		.stack = { .frames = br1, .n = 1, .leaf = "Notified" } };
	for (int i = 0; i < 10; i++)
		CHECK_EQ_U64(await_profile__add(p, &r), 0);
	c = await_profile__chains(p, &n);
	CHECK_EQ_U64(n, 3);
	for (size_t i = 0; i < n; i++) {
		sum += c[i].ns;
		CHECK(c[i].ns == 333333330 || c[i].ns == 333333340);
	}
	CHECK_EQ_U64(sum, 10 * 100 * MS);
	await_profile__free(p);
}

/* A thread's block_on future: a chain rooted at "block_on NAME", one task
 * per thread; one whose location is unknown counted with its note. */
static void test_block_on(void)
{
	struct await_profile *p = await_profile__new(100 * MS);
	struct dump_block_on b[2];
	struct dump_result r = { .block_ons = b, .n_block_ons = 2 };
	size_t n;

	CHECK(p != NULL);
	if (!p)
		return;
	a_frames[0] = frame("app::main::{async_block#0}", "src/main.rs", 7);
	a_frames[1] = frame("app::b", "src/a.rs", 9);
	b[0] = (struct dump_block_on){ .tid = 100, .name = "app::main::{async_block#0}",
		.located = "frame_scan", .note = "location optimized out at the pc: ...",
		.stack = { .frames = a_frames, .n = 2, .leaf = "Receiver<u32>" } };
	b[1] = (struct dump_block_on){ .tid = 101, .name = "app::side", .note = "location optimized out" };
	CHECK_EQ_U64(await_profile__add(p, &r), 0);
	CHECK_EQ_U64(await_profile__add(p, &r), 0);
	const struct await_chain *c = await_profile__chains(p, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_STR(c[0].stack, "block_on app::main::{async_block#0};app::main::{async_block#0} "
				      "(src/main.rs:7);app::b (src/a.rs:9);Receiver<u32>");
		CHECK_EQ_U64(c[0].ns, 200 * MS);
		CHECK_EQ_U64(c[0].tasks, 1);
		CHECK_STR(c[1].stack, "block_on app::side;(location optimized out)");
		CHECK_EQ_U64(c[1].tasks, 1);
	}
	await_profile__free(p);
}

int main(void)
{
	RUN(test_chains);
	RUN(test_block_on);
	RUN(test_split_exact);
	TEST_MAIN_END();
}
