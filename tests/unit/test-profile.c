/* SPDX-License-Identifier: MIT */
/* The built-in profile holds the incident's values; INI files override them; bad files name file, line, key. */
#include "util.h"
#include "profile.h"
#include "tap.h"

static char *write_tmp(const char *text)
{
	char *path = xstrdup("/tmp/swaptool-profile-XXXXXX");
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void bad_file(const char *text, const char *want_in_err)
{
	_cleanup_free_ char *path = write_tmp(text);
	struct profile *p = NULL;
	_cleanup_free_ char *err = NULL;

	CHECK(profile_load(path, &p, &err) == -EINVAL);
	CHECK(err && strstr(err, path) && strstr(err, want_in_err));
	if (err && !strstr(err, want_in_err))
		fprintf(stderr, "error was: %s\n", err);
	unlink(path);
}

int main(void)
{
	struct profile *p = NULL;
	_cleanup_free_ char *err = NULL;

	CHECK(profile_load(NULL, &p, &err) == 0);
	CHECK_U64(p->backup_paths.n, 5);
	CHECK_STR(p->required.v[0], "~/.config/flare/orbit/controller.key");
	CHECK_U64(p->working_set, 98ULL << 30);
	CHECK_U64(p->nruns, 3);
	CHECK_STR(p->runs[0].name, "rand16");
	CHECK_U64(p->runs[0].min_iops, 60000);
	CHECK_U64(p->runs[0].max_p50_us, 250);
	CHECK_U64(p->runs[1].inflight, 64);
	CHECK_U64(p->runs[1].max_p99_9_us, 2000);
	CHECK_U64(p->runs[2].min_mb_s, 2500);
	profile_free(p);

	_cleanup_free_ char *good = write_tmp(
		"; a site profile\n[backup]\npath = ~/.config/flare/\nrequired = ~/.config/flare/orbit/controller.key\n"
		"[accept]\nworking_set = 20GiB\n[run rand16]\nmin_iops = 50000\n[engine cold]\ncommand = true\n"
		"[drive Acme X1]\nmatch = X1-2TB\nverdict = measure\nhmb_mb = 64\n");
	CHECK(profile_load(good, &p, &err) == 0);
	CHECK_U64(p->backup_paths.n, 1);
	CHECK_U64(p->working_set, 20ULL << 30);
	CHECK_U64(p->runs[0].min_iops, 50000);
	CHECK_U64(p->runs[0].max_p50_us, 250); /* untouched keys keep their defaults */
	CHECK_U64(p->nengine, 1);
	CHECK_U64(p->ndrives, 1);
	CHECK_U64(p->drives[0].hmb_mb, 64);
	profile_free(p);
	unlink(good);

	bad_file("[backup]\npaht = x\n", ":2: unknown key 'paht' in [backup]");
	bad_file("[accept]\nworking_set = 1.819TiB\n", ":2: bad size");
	bad_file("[run rand16]\ninflight = -1\n", ":2:");
	bad_file("[nonsense]\nx = 1\n", "unknown section [nonsense]");
	bad_file("[drive Y]\nverdict = great\n", "verdict");
	bad_file("[engine e]\ntimeout = 5\n", "has no 'command'");
	bad_file("[run rand16]\nduration = 0\n", ":2: 'duration' in [run rand16] must be a whole number from 1 to 86400");
	bad_file("[backup]\npath = ../etc\n", ":2: bad path '../etc'");
	bad_file("\n[accept]\nramp 3\n", ":3: not a 'key = value' line");
	/* issue 27: a name is declared once; a second one used to replace the first silently */
	bad_file("[engine x]\ncommand = true\n[accept]\nramp = 1\n[engine x]\ncommand = false\n",
		 ":5: section [engine x] again (first at line 1)");
	bad_file("[run rand16]\nmin_iops = 1\n\n[run rand16]\nmin_iops = 2\n", ":4: section [run rand16] again (first at line 1)");
	bad_file("[engine x]\ncommand = false\ncommand = true\n", ":3: 'command' again in [engine x] (first at line 2)");
	bad_file("[accept]\nworking_set = 20GiB\nramp = 1\nworking_set = 1GiB\n",
		 ":4: 'working_set' again in [accept] (first at line 2)");
	bad_file("[backup]\npath = /etc/a\n[refetch]\npath = /x\n[backup]\npath = /etc/b\n", ":5: section [backup] again");
	/* a list is its key given again; one key in two sections is two keys */
	_cleanup_free_ char *lists = write_tmp("[backup]\npath = /etc/a\npath = /etc/b\n[refetch]\npath = /x\npath = /y\n"
					       "[engine a]\ncommand = true\n[engine b]\ncommand = true\n");
	CHECK(profile_load(lists, &p, &err) == 0);
	CHECK_U64(p->backup_paths.n, 2);
	CHECK_U64(p->refetch_paths.n, 2);
	CHECK_U64(p->nengine, 2);
	profile_free(p);
	unlink(lists);

	/* ';' inside a value is part of it: only whole-line comments */
	_cleanup_free_ char *semi = write_tmp("; comment\n  # comment\n[engine bench]\ncommand = true ; /opt/bench --all\n");
	CHECK(profile_load(semi, &p, &err) == 0);
	CHECK_U64(p->nengine, 1);
	CHECK_STR(p->engine[0].command, "true ; /opt/bench --all");
	profile_free(p);
	unlink(semi);

	_cleanup_free_ char *e = profile_expand("~/flare-pkgs", "/home/nv");
	CHECK_STR(e, "/home/nv/flare-pkgs");
	return tap_done();
}
