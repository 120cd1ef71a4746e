/* SPDX-License-Identifier: MIT */
/* ELF interpreters and DT_NEEDED closures, resolved as ld.so resolves them, for the rescue stick. */
#include "util.h"
#include "elfdeps.h"

#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <sys/stat.h>

/* Caps on what one file may declare: far above any real program (libcrypto's .dynstr is ~100 KB). */
#define ELF_MAX_PHDRS 4096u
#define ELF_MAX_DYN (1u << 16)
#define ELF_MAX_STRTAB (16u << 20)
#define ELF_MAX_INTERP 4096u
/* ld.so.conf includes nested deeper than this are a loop */
#define CONF_MAX_DEPTH 8

enum { PT_LOAD_ = 1, PT_DYNAMIC_ = 2, PT_INTERP_ = 3 };
enum { DT_NULL_ = 0, DT_NEEDED_ = 1, DT_STRTAB_ = 5, DT_STRSZ_ = 10, DT_RPATH_ = 15, DT_RUNPATH_ = 29 };

struct elf_file {
	int fd;
	uint64_t size;
	bool be, is64;
};

static uint64_t rd(const struct elf_file *f, const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[f->be ? n - 1 - i : i] << (8 * i);
	return v;
}

/* `len` bytes at `off`, both inside the file. */
static int rd_at(const struct elf_file *f, void *buf, uint64_t len, uint64_t off)
{
	uint64_t end;

	if (u64_add(off, len, &end) < 0 || end > f->size)
		return -ENOEXEC;
	return pread_all(f->fd, buf, len, off) < 0 ? -EIO : 0;
}

struct load {
	uint64_t vaddr, off, filesz;
};

/* The file offset of virtual address `va` through the PT_LOAD segments, or UINT64_MAX. */
static uint64_t va_to_off(const struct load *l, size_t n, uint64_t va)
{
	for (size_t i = 0; i < n; i++)
		if (va >= l[i].vaddr && va - l[i].vaddr < l[i].filesz)
			return l[i].off + (va - l[i].vaddr);
	return UINT64_MAX;
}

/* The dynamic section's string-valued entries into e. */
static int read_dynamic(const struct elf_file *f, uint64_t off, uint64_t len, const struct load *loads, size_t nl,
			struct elf_info *e, char **why)
{
	unsigned esz = f->is64 ? 16 : 8, w = f->is64 ? 8 : 4;
	uint64_t n = len / esz, strva = UINT64_MAX, strsz = 0, stroff = UINT64_MAX, rp = UINT64_MAX, runpath = UINT64_MAX;
	_cleanup_free_ unsigned char *dyn = NULL;
	_cleanup_free_ uint64_t *needed = NULL;
	_cleanup_free_ char *str = NULL;
	size_t nn = 0;

	if (n > ELF_MAX_DYN)
		return set_why(why, -ENOEXEC, "its dynamic section holds %" PRIu64 " entries", n);
	dyn = xcalloc(n ? n : 1, esz);
	needed = xcalloc(n ? n : 1, sizeof(*needed));
	if (rd_at(f, dyn, n * esz, off) < 0)
		return set_why(why, -ENOEXEC, "its dynamic section lies past its end");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t tag = rd(f, dyn + i * esz, w), val = rd(f, dyn + i * esz + w, w);

		if (tag == DT_NULL_)
			break;
		if (tag == DT_STRTAB_)
			strva = val;
		else if (tag == DT_STRSZ_)
			strsz = val;
		else if (tag == DT_RPATH_)
			rp = val;
		else if (tag == DT_RUNPATH_)
			runpath = val;
		else if (tag == DT_NEEDED_)
			needed[nn++] = val;
	}
	if (strva == UINT64_MAX && !nn)
		return 0; /* no strings, so nothing needed */
	if (strva != UINT64_MAX)
		stroff = va_to_off(loads, nl, strva);
	if (stroff == UINT64_MAX || strsz == 0 || strsz > ELF_MAX_STRTAB)
		return set_why(why, -ENOEXEC, "its dynamic string table is missing or outside its segments");
	str = xcalloc(1, strsz + 1);
	if (rd_at(f, str, strsz, stroff) < 0)
		return set_why(why, -ENOEXEC, "its dynamic string table lies past its end");
	/* str[strsz] is 0, so every name ends inside the buffer; one that starts outside the table is refused */
	for (size_t i = 0; i < nn; i++) {
		if (needed[i] >= strsz || !str[needed[i]])
			return set_why(why, -ENOEXEC, "a DT_NEEDED name lies outside its string table");
		strlist_add(&e->needed, str + needed[i]);
	}
	if (runpath != UINT64_MAX)
		rp = runpath; /* the loader ignores DT_RPATH when DT_RUNPATH is there */
	if (rp != UINT64_MAX && rp < strsz) {
		_cleanup_free_ char *dirs = xstrdup(str + rp);
		char *save = NULL;

		for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
			strlist_add(&e->runpath, d);
	}
	return 0;
}

/* The program headers: PT_INTERP into e, PT_LOAD into *loads, PT_DYNAMIC's place into dyn. */
static int read_phdrs(const struct elf_file *f, const unsigned char *eh, struct elf_info *e, struct load **loads,
		      size_t *nl, uint64_t dyn[2], char **why)
{
	unsigned w = f->is64 ? 8 : 4;
	uint64_t phoff = rd(f, eh + (f->is64 ? 32 : 28), w);
	unsigned phentsize = (unsigned)rd(f, eh + (f->is64 ? 54 : 42), 2), phnum = (unsigned)rd(f, eh + (f->is64 ? 56 : 44), 2);
	_cleanup_free_ unsigned char *ph = NULL;

	if (phentsize < (f->is64 ? 56u : 32u) || phnum > ELF_MAX_PHDRS)
		return set_why(why, -ENOEXEC, "its program headers are %u of %u bytes", phnum, phentsize);
	ph = xcalloc(phnum ? phnum : 1, phentsize);
	if (rd_at(f, ph, (uint64_t)phnum * phentsize, phoff) < 0)
		return set_why(why, -ENOEXEC, "its program headers lie past its end");
	*loads = xcalloc(phnum ? phnum : 1, sizeof(**loads));
	for (unsigned i = 0; i < phnum; i++) {
		const unsigned char *p = ph + (size_t)i * phentsize;
		uint32_t type = (uint32_t)rd(f, p, 4);
		uint64_t off = rd(f, p + (f->is64 ? 8 : 4), w), va = rd(f, p + (f->is64 ? 16 : 8), w);
		uint64_t filesz = rd(f, p + (f->is64 ? 32 : 16), w);

		if (type == PT_LOAD_)
			(*loads)[(*nl)++] = (struct load){ va, off, filesz };
		else if (type == PT_DYNAMIC_)
			dyn[0] = off, dyn[1] = filesz;
		else if (type == PT_INTERP_ && !e->interp) {
			if (filesz < 2 || filesz > ELF_MAX_INTERP)
				return set_why(why, -ENOEXEC, "its interpreter's name is %" PRIu64 " bytes", filesz);
			e->interp = xcalloc(1, filesz + 1);
			if (rd_at(f, e->interp, filesz, off) < 0 || strlen(e->interp) + 1 != filesz || e->interp[0] != '/')
				return set_why(why, -ENOEXEC, "its interpreter's name is not an absolute path inside it");
		}
	}
	return 0;
}

int elf_read(int fd, struct elf_info *e, char **why)
{
	struct elf_file f = { .fd = fd };
	unsigned char eh[64];
	_cleanup_free_ struct load *loads = NULL;
	size_t nl = 0;
	uint64_t dyn[2] = { 0, 0 };
	struct stat st;
	int r;

	*e = (struct elf_info){ 0 };
	if (fstat(fd, &st) < 0)
		return set_why(why, -errno, "cannot stat it: %s", strerror(errno));
	f.size = (uint64_t)st.st_size;
	if (!S_ISREG(st.st_mode) || f.size < 52 || pread_all(fd, eh, f.size < 64 ? 52 : 64, 0) < 0 ||
	    memcmp(eh, "\177ELF", 4) != 0)
		return set_why(why, -ENOEXEC, "it is not an ELF file");
	if ((eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2) || eh[6] != 1 || (eh[4] == 2 && f.size < 64))
		return set_why(why, -ENOEXEC, "its ELF identification (class %u, data %u, version %u) is not one this reads",
			       eh[4], eh[5], eh[6]);
	f.is64 = eh[4] == 2;
	f.be = eh[5] == 2;
	e->cls = eh[4];
	e->data = eh[5];
	e->machine = (uint16_t)rd(&f, eh + 18, 2);
	r = read_phdrs(&f, eh, e, &loads, &nl, dyn, why);
	if (r == 0 && dyn[1])
		r = read_dynamic(&f, dyn[0], dyn[1], loads, nl, e, why);
	if (r < 0)
		elf_info_free(e);
	return r;
}

void elf_info_free(struct elf_info *e)
{
	free(e->interp);
	e->interp = NULL;
	strlist_clear(&e->needed);
	strlist_clear(&e->runpath);
}

static bool listed(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->v[i], s))
			return true;
	return false;
}

static void conf_read(const char *conf, struct strlist *dirs, int depth)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *base = NULL;
	size_t cap = 0;

	if (depth > CONF_MAX_DEPTH || !(f = fopen(conf, "re")))
		return;
	base = xstrdup(conf);
	if (strrchr(base, '/'))
		*strrchr(base, '/') = 0;
	while (getline(&line, &cap, f) > 0) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "#\r\n")] = 0;
		for (size_t n = strlen(s); n && (s[n - 1] == ' ' || s[n - 1] == '\t'); n--)
			s[n - 1] = 0;
		if (!*s || startswith(s, "hwcap"))
			continue;
		if (startswith(s, "include") && (s[7] == ' ' || s[7] == '\t')) {
			char *pat = s + 8 + strspn(s + 8, " \t");
			_cleanup_free_ char *full = pat[0] == '/' ? xstrdup(pat) : xasprintf("%s/%s", base, pat);
			glob_t g = { 0 };

			if (glob(full, 0, NULL, &g) == 0)
				for (size_t i = 0; i < g.gl_pathc; i++)
					conf_read(g.gl_pathv[i], dirs, depth + 1);
			globfree(&g);
			continue;
		}
		if (s[0] == '/' && !listed(dirs, s))
			strlist_add(dirs, s);
	}
}

void elf_libdirs(const char *conf, struct strlist *dirs)
{
	static const char *const defaults[] = { "/lib", "/usr/lib", "/lib64", "/usr/lib64" };

	if (conf)
		conf_read(conf, dirs, 0);
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++)
		if (!listed(dirs, defaults[i]))
			strlist_add(dirs, defaults[i]);
}

/* `dir`/`name` when it is an ELF of the class and machine of `want`: the path, else NULL. */
static char *try_lib(const char *dir, const char *name, const struct elf_info *want)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct elf_info e;
	bool fits;

	if (fd < 0 || elf_read(fd, &e, NULL) < 0)
		return NULL;
	fits = e.cls == want->cls && e.machine == want->machine;
	elf_info_free(&e);
	return fits ? TAKE_PTR(path) : NULL;
}

/* Where the loader finds `name` for the object at `from` (described by `e`), or NULL. */
static char *resolve(const char *name, const char *from, const struct elf_info *e, const struct strlist *libdirs)
{
	_cleanup_free_ char *origin = xstrdup(from);
	char *p;

	if (strchr(name, '/'))
		return name[0] == '/' ? try_lib("", name + 1, e) : NULL;
	if ((p = strrchr(origin, '/')))
		*p = 0;
	for (size_t i = 0; i < e->runpath.n; i++) {
		_cleanup_free_ char *a = str_replace_all(e->runpath.v[i], "${ORIGIN}", origin);
		_cleanup_free_ char *d = str_replace_all(a, "$ORIGIN", origin);

		if ((p = try_lib(d, name, e)))
			return p;
	}
	for (size_t i = 0; i < libdirs->n; i++)
		if ((p = try_lib(libdirs->v[i], name, e)))
			return p;
	return NULL;
}

/* One object's interpreter and libraries onto the queue (files), each once. */
static int visit(const char *path, const struct strlist *libdirs, struct strlist *files, char **why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	_cleanup_free_ char *w = NULL;
	struct elf_info e;
	int r;

	if (fd < 0)
		return set_why(why, -errno, "cannot open '%s': %s", path, strerror(errno));
	r = elf_read(fd, &e, &w);
	if (r == -ENOEXEC && streq(w, "it is not an ELF file"))
		return 0; /* a script: its interpreter is one of the programs */
	if (r < 0)
		return set_why(why, r, "'%s': %s", path, w);
	if (e.interp && !listed(files, e.interp))
		strlist_add(files, e.interp);
	for (size_t i = 0; i < e.needed.n; i++) {
		_cleanup_free_ char *lib = resolve(e.needed.v[i], path, &e, libdirs);

		if (!lib) {
			r = set_why(why, -ENOENT, "the library '%s' that '%s' needs is in none of the loader's directories",
				    e.needed.v[i], path);
			break;
		}
		if (!listed(files, lib))
			strlist_add(files, lib);
	}
	elf_info_free(&e);
	return r;
}

int elf_closure(const struct strlist *roots, const struct strlist *libdirs, struct strlist *files, char **why)
{
	int r;

	for (size_t i = 0; i < roots->n; i++)
		if ((r = visit(roots->v[i], libdirs, files, why)) < 0)
			return r;
	/* files grows while it is walked: every library found is visited once, in turn */
	for (size_t i = 0; i < files->n; i++)
		if ((r = visit(files->v[i], libdirs, files, why)) < 0)
			return r;
	return 0;
}
