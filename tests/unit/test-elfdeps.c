/* SPDX-License-Identifier: MIT */
/* elfdeps (src/elfdeps.c): the interpreter and DT_NEEDED of real programs against readelf's, their
 * closure against ldd's; ld.so.conf with includes and comments; truncated, hostile and non-ELF files;
 * a library that is nowhere. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "elfdeps.h"
#include "tap.h"
#include "testsh.h"

#include <fcntl.h>

static int read_path(const char *path, struct elf_info *e, char **why)
{
	_cleanup_free_ char *p = path[0] == '/' ? xstrdup(path) : tpath(path);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : elf_read(fd, e, why);
}

/* elf_read's DT_NEEDED against readelf -d, one name a line */
static void against_readelf(const char *prog)
{
	_cleanup_free_ char *want = sh_str("readelf -d '%s' | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p'", prog);
	_cleanup_free_ char *interp = sh_str("readelf -l '%s' | sed -n 's/.*Requesting program interpreter: \\(.*\\)\\]/\\1/p'",
					     prog);
	_cleanup_free_ char *got = xstrdup("");
	struct elf_info e;

	CHECK(read_path(prog, &e, NULL) == 0);
	for (size_t i = 0; i < e.needed.n; i++) {
		char *n = xasprintf("%s%s%s", got, i ? "\n" : "", e.needed.v[i]);

		free(got);
		got = n;
	}
	CHECK_STR(got, want);
	CHECK_STR(e.interp ? e.interp : "", interp);
	CHECK(e.cls == 2 || e.cls == 1);
	elf_info_free(&e);
}

int main(void)
{
	_cleanup_free_ char *why = NULL, *bash = NULL, *ls = NULL, *ldd = NULL, *got = xstrdup("");
	struct strlist dirs = { 0 }, roots = { 0 }, files = { 0 }, none = { 0 };
	struct elf_info e;

	tdir_make("test-elfdeps");
	need_tools("readelf ldd");
	bash = sh_str("command -v bash");
	ls = sh_str("command -v ls");
	against_readelf(bash);
	against_readelf(ls);
	{
		_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);

		against_readelf(self);
	}

	/* the closure of ls and bash holds every library ldd names (by real path: ldd may name
	 * /lib where the closure names /usr/lib, or the other way round) */
	elf_libdirs("/etc/ld.so.conf", &dirs);
	strlist_add(&roots, ls);
	strlist_add(&roots, bash);
	CHECK(elf_closure(&roots, &dirs, &files, &why) == 0);
	for (size_t i = 0; i < files.n; i++) {
		char *real = realpath(files.v[i], NULL), *n = xasprintf("%s%s\n", got, real ? real : files.v[i]);

		free(real);
		free(got);
		got = n;
	}
	{
		_cleanup_free_ char *closure = tpath("closure");

		CHECK(write_file_atomic(closure, got, strlen(got), 0644) == 0);
	}
	ldd = sh_str("ldd %s %s | awk '$2 == \"=>\" && $3 ~ /^\\// { print $3 } $1 ~ /^\\// && $1 !~ /:$/ { print $1 }' | "
		     "xargs -n1 realpath | sort -u | comm -23 - <(sort -u closure)", ls, bash);
	CHECK_STR(ldd, "");
	CHECK(files.n >= 2); /* the interpreter and libc at least */
	strlist_clear(&files);

	/* a library that is in none of the directories */
	CHECK(elf_closure(&roots, &none, &files, &why) == -ENOENT);
	CHECK(why && strstr(why, "in none of the loader's directories"));
	strlist_clear(&files);

	/* ld.so.conf: comments, blank lines, hwcap, an include by glob relative to the file */
	CHECK(sh("mkdir -p conf.d && printf '# c\\n\\n/opt/a  # x\\ninclude conf.d/*.conf\\nhwcap 0 nosegneg\\n/opt/a\\n' > ld.conf && "
		 "printf '/opt/b\\n' > conf.d/1.conf && printf 'include %%s/ld.conf\\n/opt/c\\n' \"$PWD\" > conf.d/2.conf") == 0);
	strlist_clear(&dirs);
	{
		_cleanup_free_ char *conf = tpath("ld.conf");

		elf_libdirs(conf, &dirs);
	}
	CHECK(dirs.n == 7);
	CHECK_STR(dirs.v[0], "/opt/a");
	CHECK_STR(dirs.v[1], "/opt/b");
	CHECK_STR(dirs.v[2], "/opt/c");
	CHECK_STR(dirs.v[3], "/lib");
	CHECK_STR(dirs.v[6], "/usr/lib64");

	/* not an ELF, truncated, hostile headers */
	CHECK(sh("printf '#!/bin/sh\\n' > script && head -c 40 '%s' > short && head -c 200 '%s' > cut && cp '%s' bad && "
		 "printf '\\xff\\xff' | dd of=bad bs=1 seek=56 conv=notrunc status=none && cp '%s' badphoff && "
		 "printf '\\xff\\xff\\xff\\x7f' | dd of=badphoff bs=1 seek=32 conv=notrunc status=none", ls, ls, ls, ls) == 0);
	free(why), why = NULL;
	CHECK(read_path("script", &e, &why) == -ENOEXEC);
	CHECK_STR(why, "it is not an ELF file");
	CHECK(read_path("short", &e, &why) == -ENOEXEC);
	CHECK(read_path("cut", &e, &why) == -ENOEXEC);        /* program headers past its end */
	CHECK(read_path("bad", &e, &why) == -ENOEXEC);        /* 65535 program headers */
	CHECK(read_path("badphoff", &e, &why) == -ENOEXEC);   /* headers 2 GiB in */
	/* a script among the roots is no error: its interpreter is a program of its own */
	strlist_clear(&roots);
	{
		_cleanup_free_ char *script = tpath("script");

		strlist_add(&roots, script);
	}
	CHECK(elf_closure(&roots, &dirs, &files, &why) == 0 && files.n == 0);

	strlist_clear(&roots);
	strlist_clear(&files);
	strlist_clear(&dirs);
	return tap_done();
}
