/* SystemTap SDT notes: name "stapsdt", type 3, a descriptor of three
 * 64-bit addresses (site, link-time `.stapsdt.base`, semaphore) followed by
 * three NUL-terminated strings (provider, name, argument spec). The note
 * buffer is parsed by hand, so unit tests can feed synthetic ones; libelf
 * only finds the sections. The file's bytes are untrusted: every length is
 * checked against the buffer. */
#include "sym/usdt_notes.h"
#include "sym/elf_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT_STAPSDT 3

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* x86-64 registers by name, with their byte offset in struct pt_regs
 * (arch/x86/include/asm/ptrace.h: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx
 * dx si di orig_ax ip cs flags sp ss), their size and the shift of the
 * high-byte registers. */
static const struct reg {
	const char *name;
	uint8_t off, size, shift;
} regs[] = {
	{ "rax", 80, 8, 0 }, { "eax", 80, 4, 0 }, { "ax", 80, 2, 0 }, { "al", 80, 1, 0 }, { "ah", 80, 1, 8 },
	{ "rbx", 40, 8, 0 }, { "ebx", 40, 4, 0 }, { "bx", 40, 2, 0 }, { "bl", 40, 1, 0 }, { "bh", 40, 1, 8 },
	{ "rcx", 88, 8, 0 }, { "ecx", 88, 4, 0 }, { "cx", 88, 2, 0 }, { "cl", 88, 1, 0 }, { "ch", 88, 1, 8 },
	{ "rdx", 96, 8, 0 }, { "edx", 96, 4, 0 }, { "dx", 96, 2, 0 }, { "dl", 96, 1, 0 }, { "dh", 96, 1, 8 },
	{ "rsi", 104, 8, 0 }, { "esi", 104, 4, 0 }, { "si", 104, 2, 0 }, { "sil", 104, 1, 0 },
	{ "rdi", 112, 8, 0 }, { "edi", 112, 4, 0 }, { "di", 112, 2, 0 }, { "dil", 112, 1, 0 },
	{ "rbp", 32, 8, 0 }, { "ebp", 32, 4, 0 }, { "bp", 32, 2, 0 }, { "bpl", 32, 1, 0 },
	{ "rsp", 152, 8, 0 }, { "esp", 152, 4, 0 }, { "sp", 152, 2, 0 }, { "spl", 152, 1, 0 },
	{ "rip", 128, 8, 0 },
	{ "r8", 72, 8, 0 }, { "r8d", 72, 4, 0 }, { "r8w", 72, 2, 0 }, { "r8b", 72, 1, 0 },
	{ "r9", 64, 8, 0 }, { "r9d", 64, 4, 0 }, { "r9w", 64, 2, 0 }, { "r9b", 64, 1, 0 },
	{ "r10", 56, 8, 0 }, { "r10d", 56, 4, 0 }, { "r10w", 56, 2, 0 }, { "r10b", 56, 1, 0 },
	{ "r11", 48, 8, 0 }, { "r11d", 48, 4, 0 }, { "r11w", 48, 2, 0 }, { "r11b", 48, 1, 0 },
	{ "r12", 24, 8, 0 }, { "r12d", 24, 4, 0 }, { "r12w", 24, 2, 0 }, { "r12b", 24, 1, 0 },
	{ "r13", 16, 8, 0 }, { "r13d", 16, 4, 0 }, { "r13w", 16, 2, 0 }, { "r13b", 16, 1, 0 },
	{ "r14", 8, 8, 0 }, { "r14d", 8, 4, 0 }, { "r14w", 8, 2, 0 }, { "r14b", 8, 1, 0 },
	{ "r15", 0, 8, 0 }, { "r15d", 0, 4, 0 }, { "r15w", 0, 2, 0 }, { "r15b", 0, 1, 0 },
};

int usdt_arg_parse(const char *spec, struct usdt_arg *out)
{
	const char *p = spec, *end;
	char *num_end;

	memset(out, 0, sizeof(*out));
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	end = strchr(p, ' ');
	if (!end)
		end = p + strlen(p);
	/* optional size: "-4@", "8@" */
	const char *at = memchr(p, '@', (size_t)(end - p));
	if (at) {
		long sz = strtol(p, &num_end, 10);
		if (num_end != at || !(sz == 1 || sz == 2 || sz == 4 || sz == 8 ||
				       sz == -1 || sz == -2 || sz == -4 || sz == -8))
			return -EINVAL;
		out->size = (int8_t)sz;
		p = at + 1;
	}
	if (*p == '%') {
		size_t n = (size_t)(end - p - 1);
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
			if (strlen(regs[i].name) != n || memcmp(regs[i].name, p + 1, n))
				continue;
			out->kind = USDT_ARG_REG;
			out->reg_off = regs[i].off;
			out->shift = regs[i].shift;
			if (!out->size)
				out->size = (int8_t)regs[i].size;
			return 0;
		}
		return -EINVAL;
	}
	if (*p == '$') {
		errno = 0;
		long long v = strtoll(p + 1, &num_end, 0);
		if (num_end != end || num_end == p + 1) {
			/* not a plain number ($sym): not read */
			out->kind = USDT_ARG_OTHER;
			return 0;
		}
		if (errno == ERANGE) /* a large unsigned constant */
			v = (long long)strtoull(p + 1, NULL, 0);
		out->kind = USDT_ARG_CONST;
		out->value = v;
		return 0;
	}
	out->kind = USDT_ARG_OTHER;
	return 0;
}

uint64_t usdt_arg_value(const struct usdt_arg *a, uint64_t raw)
{
	unsigned size = a->size < 0 ? (unsigned)-a->size : (unsigned)a->size;
	uint64_t v;

	if (a->kind == USDT_ARG_REG)
		v = raw >> a->shift;
	else if (a->kind == USDT_ARG_CONST)
		v = (uint64_t)a->value;
	else
		return 0;
	if (size == 0 || size >= 8)
		return v;
	unsigned bits = size * 8;
	v &= (1ull << bits) - 1;
	if (a->size < 0 && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

bool usdt_match(const char *pattern, const struct usdt_site *site)
{
	const char *colon = strchr(pattern, ':');

	if (!colon)
		return false;
	size_t plen = (size_t)(colon - pattern);
	if (strlen(site->provider) != plen || memcmp(site->provider, pattern, plen))
		return false;
	return !strcmp(colon + 1, "*") || !strcmp(colon + 1, site->name);
}

/* The NUL-terminated string at *p before end, advancing past it; NULL if
 * it is not terminated. */
static const char *take_str(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, '\0', (size_t)(end - *p));
	const char *s = (const char *)*p;

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

int usdt_notes__parse(struct usdt_notes *out, const void *buf, size_t len, uint64_t base_addr)
{
	const uint8_t *p = buf, *end = p + len;

	while ((size_t)(end - p) >= 12) {
		uint32_t namesz = rd32(p), descsz = rd32(p + 4), type = rd32(p + 8);
		p += 12;
		if (namesz > (size_t)(end - p) || align4(namesz) > (size_t)(end - p))
			return -EBADMSG;
		const uint8_t *name = p;
		p += align4(namesz);
		if (descsz > (size_t)(end - p))
			return -EBADMSG;
		const uint8_t *desc = p, *desc_end = p + descsz;
		/* the last note's padding may be cut by the section's end */
		p += align4(descsz) <= (size_t)(end - p) ? align4(descsz) : descsz;
		if (type != NT_STAPSDT || namesz != 8 || memcmp(name, "stapsdt", 8))
			continue;
		if (descsz < 24)
			return -EBADMSG;
		uint64_t pc = rd64(desc), base = rd64(desc + 8), sema = rd64(desc + 16);
		const uint8_t *s = desc + 24;
		const char *prov = take_str(&s, desc_end), *pname = take_str(&s, desc_end);
		const char *args = pname ? take_str(&s, desc_end) : NULL;
		if (!prov || !pname)
			return -EBADMSG;
		if (!args)
			args = "";
		if (base_addr && base) {
			/* prelink moved the sections: move the site and semaphore alike */
			pc += base_addr - base;
			if (sema)
				sema += base_addr - base;
		}
		struct usdt_site *sites = realloc(out->sites, (out->n + 1) * sizeof(*sites));
		if (!sites)
			return -ENOMEM;
		out->sites = sites;
		struct usdt_site *site = &sites[out->n];
		memset(site, 0, sizeof(*site));
		site->addr = pc;
		site->sema = sema;
		site->provider = strdup(prov);
		site->name = strdup(pname);
		site->args = strdup(args);
		if (!site->provider || !site->name || !site->args) {
			free(site->provider);
			free(site->name);
			free(site->args);
			return -ENOMEM;
		}
		if (usdt_arg_parse(args, &site->arg0))
			site->arg0 = (struct usdt_arg){ .kind = USDT_ARG_OTHER };
		out->n++;
	}
	return 0;
}

struct usdt_notes *usdt_notes__read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct usdt_notes *notes;
	int saved;

	if (fd < 0)
		return NULL;
	notes = usdt_notes__read_fd(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return notes;
}

struct usdt_notes *usdt_notes__read_fd(int fd)
{
	struct usdt_notes *notes = calloc(1, sizeof(*notes));
	Elf *elf = NULL;
	Elf_Scn *scn = NULL, *note_scn = NULL;
	uint64_t base_addr = 0;
	size_t shstrndx;
	int err = 0;

	if (!notes)
		return NULL;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt"))
			note_scn = scn;
		else if (!strcmp(name, ".stapsdt.base"))
			base_addr = sh.sh_addr;
	}
	if (note_scn) {
		/* raw bytes: the note layout is the same on disk and in memory on
		 * the host this runs on (x86-64, little-endian) */
		Elf_Data *data = elf_rawdata(note_scn, NULL);
		if (data && data->d_buf)
			err = usdt_notes__parse(notes, data->d_buf, data->d_size, base_addr);
	}
cleanup:
	if (elf)
		elf_end(elf);
	if (err) {
		usdt_notes__free(notes);
		errno = -err;
		return NULL;
	}
	return notes;
}

void usdt_notes__clear(struct usdt_notes *notes)
{
	if (!notes)
		return;
	for (size_t i = 0; i < notes->n; i++) {
		free(notes->sites[i].provider);
		free(notes->sites[i].name);
		free(notes->sites[i].args);
	}
	free(notes->sites);
	notes->sites = NULL;
	notes->n = 0;
}

void usdt_notes__free(struct usdt_notes *notes)
{
	usdt_notes__clear(notes);
	free(notes);
}
