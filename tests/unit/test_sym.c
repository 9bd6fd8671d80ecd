/* Symbols: demangling (legacy and v0), generic stripping, future names,
 * first generic argument, instruction classes, ELF reading. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sym/demangle.h"
#include "sym/dwarf_names.h"
#include "sym/elf_image.h"

static void check_demangle(const char *mangled, const char *want)
{
	char *d = sym_demangle(mangled);
	CHECK_STR(d, want);
	free(d);
}

static void check_strip(const char *name, const char *want)
{
	char *s = sym_strip_generics(name);
	CHECK_STR(s, want);
	free(s);
}

static void check_pretty(const char *name, const char *want)
{
	char *s = sym_pretty_future(name);
	CHECK_STR(s, want);
	free(s);
}

static void check_arg(const char *name, const char *want)
{
	char *s = sym_first_generic_arg(name);
	CHECK_STR(s, want);
	free(s);
}

static void test_demangle_legacy(void)
{
	/* hash and .llvm suffix removed */
	check_demangle("_ZN5tokio7runtime4task3raw4poll17h6187f6ca74574405E.llvm.10717365064052225006",
		       "tokio::runtime::task::raw::poll");
	check_demangle("_ZN5tokio7runtime4task7harness20Harness$LT$T$C$S$GT$8complete17h0123456789abcdefE",
		       "tokio::runtime::task::harness::Harness<T,S>::complete");
	/* not mangled: unchanged */
	check_demangle("main", "main");
	check_demangle("_ZN3foo3barE", "foo::bar");
}

static void test_demangle_v0(void)
{
	check_demangle("_RNvMCsfq2Zq5gqAK1_2v0INtB2_3FoohE4showB2_", "<v0::Foo<u8>>::show");
}

static void test_strip_generics(void)
{
	check_strip("tokio::runtime::task::harness::Harness<T,S>::complete",
		    "tokio::runtime::task::harness::Harness::complete");
	check_strip("<v0::Foo<u8>>::show", "<v0::Foo>::show");
	check_strip("f::<u8, alloc::vec::Vec<u8>>", "f");
	/* inherent impl brackets are path syntax, kept */
	check_strip("tokio::x::worker::<impl tokio::x::handle::Handle>::schedule_task",
		    "tokio::x::worker::<impl tokio::x::handle::Handle>::schedule_task");
	check_strip("a::<impl a::Schedule for alloc::sync::Arc<a::Handle>>::schedule",
		    "a::<impl a::Schedule for alloc::sync::Arc>::schedule");
	/* "->" in fn types is not a closing bracket */
	check_strip("a::B<fn() -> u8>::c", "a::B::c");
}

static void test_pretty_future(void)
{
	check_pretty("app::main::{async_block#3}::{async_block_env#0}",
		     "app::main::{async_block#3}::{async_block#0}");
	check_pretty("blocker::stuck_forever::{async_fn_env#0}", "blocker::stuck_forever");
	check_pretty("x::Launch::launch::{closure_env#0}", "x::Launch::launch::{closure#0}");
	check_pretty("app::f::{async_fn#0}::{closure#0}::{async_closure_env#0}",
		     "app::f::{async_fn#0}::{closure#0}");
	check_pretty("alloc::sync::Arc<a::Handle, alloc::alloc::Global>", "alloc::sync::Arc<a::Handle>");
}

static void test_first_generic_arg(void)
{
	check_arg("poll<app::{async_block_env#0}, alloc::sync::Arc<a::H, alloc::alloc::Global>>",
		  "app::{async_block_env#0}");
	check_arg("poll<x::A<u8, u16>, S>", "x::A<u8, u16>");
	check_arg("tokio::runtime::task::raw::poll::<app::F, S>", "app::F");
	check_arg("<a::B as c::D>::poll<T>", "T");
	check_arg("poll<(u8, u16), S>", "(u8, u16)");
	CHECK(sym_first_generic_arg("tokio::runtime::task::raw::poll") == NULL);
	CHECK(sym_first_generic_arg("poll<>") == NULL);
}

static void test_insn_emulated(void)
{
	const uint8_t push_rbx[] = { 0x53 }, push_r14[] = { 0x41, 0x56 };
	const uint8_t jmp32[] = { 0xe9, 0, 0, 0, 0 }, call32[] = { 0xe8, 0, 0, 0, 0 };
	const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0, 0 }, nop66[] = { 0x66, 0x90 };
	const uint8_t sub_rsp[] = { 0x48, 0x83, 0xec, 0x28 }, endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	const uint8_t mov[] = { 0x48, 0x89, 0xf8 };

	CHECK(insn_emulated(push_rbx, sizeof(push_rbx)) == 1);
	CHECK(insn_emulated(push_r14, sizeof(push_r14)) == 1);
	CHECK(insn_emulated(jmp32, sizeof(jmp32)) == 1);
	CHECK(insn_emulated(call32, sizeof(call32)) == 1);
	CHECK(insn_emulated(nop5, sizeof(nop5)) == 1);
	CHECK(insn_emulated(nop66, sizeof(nop66)) == 1);
	CHECK(insn_emulated(sub_rsp, sizeof(sub_rsp)) == 0);
	CHECK(insn_emulated(endbr, sizeof(endbr)) == 0);
	CHECK(insn_emulated(mov, sizeof(mov)) == 0);
	CHECK(insn_emulated(mov, 0) == 0);

	char buf[32];
	CHECK_STR(insn_describe(push_rbx, sizeof(push_rbx), buf, sizeof(buf)), "push %rbx");
	CHECK_STR(insn_describe(push_r14, sizeof(push_r14), buf, sizeof(buf)), "push %r14");
	CHECK_STR(insn_describe(jmp32, sizeof(jmp32), buf, sizeof(buf)), "jmp rel32");
	CHECK_STR(insn_describe(call32, sizeof(call32), buf, sizeof(buf)), "call rel32");
	CHECK_STR(insn_describe(nop5, sizeof(nop5), buf, sizeof(buf)), "nop");
	CHECK_STR(insn_describe(sub_rsp, sizeof(sub_rsp), buf, sizeof(buf)), "sub $imm,%rsp");
	CHECK_STR(insn_describe(endbr, sizeof(endbr), buf, sizeof(buf)), "endbr64");
	CHECK_STR(insn_describe(mov, sizeof(mov), buf, sizeof(buf)), "48 89 f8");

	/* what the kernel refuses to probe: lock incq 0x10(%rip) (the first
	 * instruction of a poll fn counting its calls), fs: loads, int3, ud2 */
	const uint8_t lock_inc[] = { 0xf0, 0x48, 0xff, 0x05, 0x10, 0, 0, 0 };
	const uint8_t fs_mov[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };
	const uint8_t int3[] = { 0xcc }, ud2[] = { 0x0f, 0x0b };
	CHECK(insn_probeable(lock_inc, sizeof(lock_inc)) == 0);
	CHECK(insn_probeable(fs_mov, sizeof(fs_mov)) == 0);
	CHECK(insn_probeable(int3, sizeof(int3)) == 0);
	CHECK(insn_probeable(ud2, sizeof(ud2)) == 0);
	CHECK(insn_probeable(push_rbx, sizeof(push_rbx)) == 1);
	CHECK(insn_probeable(sub_rsp, sizeof(sub_rsp)) == 1);
	CHECK(insn_probeable(endbr, sizeof(endbr)) == 1);
	CHECK(insn_probeable(nop66, sizeof(nop66)) == 1);
}

int test_marker_function(int x);
__attribute__((noinline)) int test_marker_function(int x)
{
	return x * 3 + 1;
}

static void test_elf_self(void)
{
	struct elf_image *img = elf_image__open("/proc/self/exe");
	const struct elf_sym *found = NULL;
	uint8_t code[4];
	uint64_t off;

	CHECK(img != NULL);
	if (!img)
		return;
	CHECK(img->has_symtab);
	CHECK(img->has_debug_info);
	CHECK(strlen(img->build_id) == 40);
	for (size_t i = 0; i < img->n_syms; i++) {
		if (i)
			CHECK(img->syms[i - 1].addr <= img->syms[i].addr);
		if (!strcmp(img->syms[i].name, "test_marker_function"))
			found = &img->syms[i];
	}
	CHECK(found != NULL);
	if (found) {
		CHECK(elf_image__file_offset(img, found->addr, &off) == 0);
		CHECK(elf_image__read(img, found->addr, code, sizeof(code)) == (int)sizeof(code));
	}
	CHECK(elf_image__file_offset(img, 0, &off) == -ENOENT);
	elf_image__free(img);
	CHECK(test_marker_function(1) == 4);
}

static void test_elf_errors(void)
{
	errno = 0;
	CHECK(elf_image__open("/nonexistent/binary") == NULL && errno == ENOENT);
	errno = 0;
	CHECK(elf_image__open("/proc/self/status") == NULL && errno == ENOEXEC);
	elf_image__free(NULL);
}

int main(void)
{
	RUN(test_demangle_legacy);
	RUN(test_demangle_v0);
	RUN(test_strip_generics);
	RUN(test_pretty_future);
	RUN(test_first_generic_arg);
	RUN(test_insn_emulated);
	RUN(test_elf_self);
	RUN(test_elf_errors);
	TEST_MAIN_END();
}
