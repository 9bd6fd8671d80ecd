/* Unit tests for dump/task_lists.c: the walk of every shard of a sharded
 * OwnedTasks (and of one list: tokio < 1.35, a LocalSet) over a fake process memory (each node checked: live, owned by
 * the list, linked back, the last one the tail; a shard that changed under
 * the walk retried), the version facts and the version found in a path. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "dump/task_lists.h"
#include "harness.h"

#define BASE   UINT64_C(0x10000)   /* the fake memory's address */
#define OWNED  (BASE + 0x100)      /* the OwnedTasks */
#define SHARDS (BASE + 0x200)      /* its shards, 0x20 bytes each */
#define LIST_ID 7

static uint8_t mem[0x1000];

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr + len > BASE + sizeof(mem))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - BASE), &v, sizeof(v));
}

/* Layout as tokio 1.53.1's DWARF gives it: OwnedTasks { list: ShardedList
 * { lists @0 (data_ptr, length), shard_mask @0x20 }, id @0x28 }, a
 * Mutex<LinkedList> of 0x20 bytes with head @0x8, tail @0x10. */
static const struct owned_layout lay = {
	.sched_off = 0x20, .owned_off = 0x10, .id_off = 0x28, .lists_ptr_off = 0,
	.lists_len_off = 8, .mask_off = 0x20, .shard_size = 0x20, .head_off = 8, .tail_off = 0x10,
};

/* Task nodes: header addresses 0x1000 * (i + 1), not in the fake memory:
 * the node callback answers for them. */
struct fake_node {
	uint64_t h;
	struct owned_node n;
	bool dead;
	int flaky;          /* answers with a wrong prev this many times */
};

struct fake {
	struct fake_node nodes[16];
	size_t n;
	uint64_t found[64];
	size_t n_found;
};

static int fake_node(void *ctx, uint64_t h, struct owned_node *n)
{
	struct fake *f = ctx;

	for (size_t i = 0; i < f->n; i++) {
		struct fake_node *fn = &f->nodes[i];
		if (fn->h != h)
			continue;
		if (fn->dead)
			return -1;
		*n = fn->n;
		if (fn->flaky > 0) {
			fn->flaky--;
			n->prev ^= 0x8;
		}
		return 0;
	}
	return -1;
}

static int fake_found(void *ctx, uint64_t h)
{
	struct fake *f = ctx;

	if (f->n_found < 64)
		f->found[f->n_found++] = h;
	return 0;
}

static const struct owned_walk_ops ops = { .node = fake_node, .found = fake_found };

/* A list of `shards` shards; shard s holds the nodes given in chains[s]
 * (0-terminated header addresses, in list order). */
static void build(struct fake *f, uint64_t shards, const uint64_t chains[][4])
{
	memset(mem, 0, sizeof(mem));
	memset(f, 0, sizeof(*f));
	put64(OWNED + lay.id_off, LIST_ID);
	put64(OWNED + lay.lists_ptr_off, SHARDS);
	put64(OWNED + lay.lists_len_off, shards);
	put64(OWNED + lay.mask_off, shards - 1);
	for (uint64_t s = 0; s < shards; s++) {
		uint64_t prev = 0;
		for (int k = 0; k < 4 && chains[s][k]; k++) {
			struct fake_node *fn = &f->nodes[f->n++];
			fn->h = chains[s][k];
			fn->n.owner = LIST_ID;
			fn->n.prev = prev;
			fn->n.next = k + 1 < 4 ? chains[s][k + 1] : 0;
			if (!k)
				put64(SHARDS + s * lay.shard_size + lay.head_off, fn->h);
			put64(SHARDS + s * lay.shard_size + lay.tail_off, fn->h);
			prev = fn->h;
		}
	}
}

static const uint64_t eight[8][4] = {
	{ 0x8000, 0x1000 }, { 0 }, { 0 }, { 0x3000 }, { 0 }, { 0 }, { 0 }, { 0x7000, 0x6000, 0x5000 },
};

static bool has(const struct fake *f, uint64_t h)
{
	for (size_t i = 0; i < f->n_found; i++)
		if (f->found[i] == h)
			return true;
	return false;
}

static void test_every_shard(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.id, LIST_ID);
	CHECK_EQ_U64(w.shards, 8);
	CHECK_EQ_U64(w.walked, 8);
	CHECK_EQ_U64(w.tasks, 6);
	CHECK(w.cut == NULL);
	CHECK_EQ_U64(f.n_found, 6);
	for (uint64_t h = 0x1000; h <= 0x8000; h += 0x1000)
		CHECK(has(&f, h) == (h != 0x2000 && h != 0x4000));
}

static void test_foreign_node(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	f.nodes[0].n.owner = LIST_ID + 1;   /* 0x8000, head of shard 0: another list's */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 7);
	CHECK_EQ_U64(w.shards, 8);
	CHECK_STR(w.cut, "a node of the list is owned by another list");
	CHECK(!has(&f, 0x8000) && !has(&f, 0x1000));
	CHECK(has(&f, 0x3000) && has(&f, 0x5000));
}

static void test_freed_node(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	f.nodes[4].dead = true;   /* 0x6000, the middle of shard 7 */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 7);
	CHECK_STR(w.cut, "a task of the list was freed while it was walked");
	CHECK(has(&f, 0x7000) && !has(&f, 0x5000));
}

static void test_changed_then_settled(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	f.nodes[1].flaky = OWNED_TRIES - 1;   /* 0x1000's prev is torn for two reads */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 8);
	CHECK(w.cut == NULL);
	CHECK(has(&f, 0x1000));

	build(&f, 8, eight);
	f.nodes[1].flaky = OWNED_TRIES;       /* torn at every try */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 7);
	CHECK_STR(w.cut, "the task list changed while it was walked");
}

static void test_tail_mismatch(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	put64(SHARDS + 3 * lay.shard_size + lay.tail_off, 0x9000);   /* a task added meanwhile */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 7);
	CHECK_STR(w.cut, "the task list changed while it was walked");
}

static void test_not_a_list(void)
{
	struct fake f;
	struct owned_walk w;

	build(&f, 8, eight);
	put64(OWNED + lay.mask_off, 3);   /* mask of 4 shards, length 8 */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.shards, 0);
	CHECK_EQ_U64(w.walked, 0);
	CHECK(w.cut != NULL);
	CHECK_EQ_U64(f.n_found, 0);

	build(&f, 8, eight);
	put64(OWNED + lay.lists_len_off, 6);
	put64(OWNED + lay.mask_off, 5);   /* not a power of two */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.shards, 0);

	build(&f, 8, eight);
	CHECK(owned_tasks__walk(&lay, BASE + 0x2000, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_STR(w.cut, "the task list is unreadable");
}

static void test_one_shard(void)
{
	static const uint64_t one[1][4] = { { 0x1000, 0x2000, 0x3000 } };
	struct fake f;
	struct owned_walk w;

	build(&f, 1, one);   /* one shard of three tasks: no more assumed */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.shards, 1);
	CHECK_EQ_U64(w.walked, 1);
	CHECK_EQ_U64(f.n_found, 3);
}

static void test_cycle_bounded(void)
{
	static const uint64_t two[1][4] = { { 0x1000, 0x2000 } };
	struct fake f;
	struct owned_walk w;

	build(&f, 1, two);
	f.nodes[1].n.next = 0x1000;   /* 0x2000 -> 0x1000: a cycle (prev checks fail first) */
	CHECK(owned_tasks__walk(&lay, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.walked, 0);
	CHECK(w.cut != NULL);
}

static void test_facts(void)
{
	const struct task_list_fact *f24 = task_list_fact_for(24), *f34 = task_list_fact_for(34);
	const struct task_list_fact *f35 = task_list_fact_for(35), *f53 = task_list_fact_for(53);

	const struct task_list_fact *f49 = task_list_fact_for(49), *f50 = task_list_fact_for(50);
	const struct task_list_fact *rows;
	size_t n;

	CHECK(f24 && f24->kind == TASK_LIST_ONE && f24 == f34);
	CHECK(f35 && f35->kind == TASK_LIST_SHARDED && f35 == f49);
	CHECK(f53 && f53->kind == TASK_LIST_SHARDED && f53 == f50 && f53 != f35);
	CHECK_STR(f35->pr, "tokio#6001");
	CHECK_STR(f53->pr, "tokio#7880");
	CHECK_STR(f24->worker_comm, "tokio-runtime-w");
	CHECK_STR(f35->worker_comm, "tokio-runtime-w");
	CHECK_STR(f53->worker_comm, "tokio-rt-worker");
	/* the rows cover every version once, in order */
	rows = task_list_facts(&n);
	CHECK(n >= 2 && rows[0].from_minor == 0 && rows[n - 1].to_minor == 0);
	for (size_t i = 1; i < n; i++)
		CHECK(rows[i].from_minor == rows[i - 1].to_minor + 1);
	for (size_t i = 0; i < n; i++)
		CHECK(strlen(rows[i].worker_comm) <= 15 && (i == 0 || rows[i].pr));
	CHECK_EQ_U64(task_list_shards(f53, 2), 8);    /* 2 workers: 8 shards */
	CHECK_EQ_U64(task_list_shards(f53, 1), 4);    /* current_thread: OwnedTasks::new(1), 4 shards */
	CHECK_EQ_U64(task_list_shards(f53, 3), 16);
	CHECK_EQ_U64(task_list_shards(f53, 4), 16);
	CHECK_EQ_U64(task_list_shards(f53, 100000), 1u << 16);   /* tokio's cap */
	CHECK_EQ_U64(task_list_shards(f53, 0), 0);
	CHECK_EQ_U64(task_list_shards(f24, 2), 0);
}

/* One list (tokio < 1.35, a LocalSet: l.one): OwnedTasks { inner: Mutex<
 * OwnedTasksInner { list: { head @0x8, tail @0x10 } } }, id @0x28 } as
 * 1.24.2's DWARF gives it, walked from its head as one shard. */
static const struct owned_layout one = { .one = true, .owned_off = 0x10, .id_off = 0x28,
					 .head_off = 8, .tail_off = 0x10 };

static void build_one(struct fake *f, const uint64_t *chain, size_t n)
{
	memset(mem, 0, sizeof(mem));
	memset(f, 0, sizeof(*f));
	put64(OWNED + one.id_off, LIST_ID);
	for (size_t k = 0; k < n; k++) {
		struct fake_node *fn = &f->nodes[f->n++];
		fn->h = chain[k];
		fn->n.owner = LIST_ID;
		fn->n.prev = k ? chain[k - 1] : 0;
		fn->n.next = k + 1 < n ? chain[k + 1] : 0;
	}
	if (n) {
		put64(OWNED + one.head_off, chain[0]);
		put64(OWNED + one.tail_off, chain[n - 1]);
	}
}

static void test_one_list(void)
{
	static const uint64_t chain[] = { 0x3000, 0x1000, 0x2000 };
	struct fake f;
	struct owned_walk w;

	build_one(&f, chain, 3);
	CHECK(owned_tasks__walk(&one, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK_EQ_U64(w.id, LIST_ID);
	CHECK_EQ_U64(w.shards, 1);
	CHECK_EQ_U64(w.walked, 1);
	CHECK_EQ_U64(w.tasks, 3);
	CHECK(w.cut == NULL);
	CHECK(has(&f, 0x1000) && has(&f, 0x2000) && has(&f, 0x3000));
	/* empty: walked, nothing found */
	build_one(&f, chain, 0);
	CHECK(owned_tasks__walk(&one, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK(w.shards == 1 && w.walked == 1 && w.tasks == 0 && !w.cut);
	/* a node of another list: not walked, said */
	build_one(&f, chain, 3);
	f.nodes[1].n.owner = LIST_ID + 1;
	CHECK(owned_tasks__walk(&one, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK(w.shards == 1 && w.walked == 0 && w.cut != NULL);
	/* the tail is not the last node: changed under the walk */
	build_one(&f, chain, 3);
	put64(OWNED + one.tail_off, 0x1000);
	CHECK(owned_tasks__walk(&one, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK(w.walked == 0 && w.cut != NULL);
	/* no id: not a list */
	build_one(&f, chain, 3);
	put64(OWNED + one.id_off, 0);
	CHECK(owned_tasks__walk(&one, OWNED, fake_read, NULL, &ops, &f, &w) == 0);
	CHECK(w.shards == 0 && w.cut != NULL);
}

int main(void)
{
	RUN(test_every_shard);
	RUN(test_foreign_node);
	RUN(test_freed_node);
	RUN(test_changed_then_settled);
	RUN(test_tail_mismatch);
	RUN(test_not_a_list);
	RUN(test_one_shard);
	RUN(test_cycle_bounded);
	RUN(test_one_list);
	RUN(test_facts);
	TEST_MAIN_END();
}
