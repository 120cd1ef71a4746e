/* SPDX-License-Identifier: MIT */
/* Config tarballs through libarchive: backup set walk, atomic write with read-back, whole-archive
 * validation. Paths and owner names under a root are src/rootpath.c, the extraction src/extract.c. */
#include "util.h"
#include "tarball.h"
#include "rootpath.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <zlib.h>

static char *join(const char *root, const char *rel)
{
	size_t n = strlen(root);

	if (n > 0 && root[n - 1] == '/')
		return xasprintf("%s%s", root, rel);
	return xasprintf("%s/%s", root, rel);
}

/* ---------------------------------------------------------------- interruption ---- */

volatile sig_atomic_t arc_interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	arc_interrupted = 1;
}

void arc_catch_sigint(void)
{
	/* no SA_RESTART needed: every loop that matters checks the flag between entries */
	struct sigaction sa = { .sa_handler = on_sigint };

	arc_interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* ---------------------------------------------------------------- backup set ---- */

static void add_named(struct named_reason **v, size_t *n, const char *path, const char *reason)
{
	*v = realloc(*v, (*n + 1) * sizeof(**v));
	if (!*v)
		abort();
	(*v)[(*n)++] = (struct named_reason){ .path = xstrdup(path), .reason = xstrdup(reason) };
}

static struct mentry *source_add(struct arc_source *s, const char *rel, const char *full, const struct stat *st)
{
	struct mentry *e = manifest_add(&s->man, rel);

	s->src = realloc(s->src, s->man.cap * sizeof(char *));
	if (!s->src)
		abort();
	s->src[s->man.n - 1] = xstrdup(full);
	e->mode = st->st_mode & 07777;
	e->uid = st->st_uid;
	e->gid = st->st_gid;
	e->user = root_user_name(s->root, st->st_uid);
	e->group = root_group_name(s->root, st->st_gid);
	e->mtime = st->st_mtim.tv_sec;
	return e;
}

static bool source_has(const struct arc_source *s, const char *rel)
{
	for (size_t i = 0; i < s->man.n; i++)
		if (streq(s->man.e[i].path, rel))
			return true;
	return false;
}

static int unreadable(struct arc_source *s, const struct backup_opts *o, const char *full, int err)
{
	if (o->skip_unreadable) {
		_cleanup_free_ char *r = xasprintf("unreadable: %s", strerror(err));
		add_named(&s->skipped, &s->nskipped, full, r);
	} else if (!s->unreadable)
		s->unreadable = xasprintf("%s: %s", full, strerror(err));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name the readers would refuse is refused here, before anything is written: the read-back,
 * restore and verify check every archive path with path_check (src/rootpath.c: a control byte such
 * as a newline or an escape, over 1024 bytes) and read the manifest as JSON, which carries only
 * UTF-8 (src/json.c's jset_str writes any other byte as U+FFFD, so the manifest's path and link would
 * no longer be the archive's). Backing up such a name would end in a read-back that removes the
 * tarball; a symlink's target is written as it is, so only its bytes must be UTF-8. */
static int name_refused(const char *full, const char *rel, const char *link, char **why)
{
	const char *pwhy = NULL;
	_cleanup_free_ char *shown = text_safe(full, false);

	if (path_check(rel, &pwhy) < 0 || !utf8_valid(rel))
		return set_why(why, -EINVAL, "cannot back up '%s' (%s): restore refuses such a name, so no tarball was "
			    "written; rename it or move it out of the backup set, then run backup again", shown,
			    pwhy ? pwhy : "bytes that are not UTF-8 in the name");
	if (link && !utf8_valid(link)) {
		_cleanup_free_ char *lshown = text_safe(link, false);

		return set_why(why, -EINVAL, "cannot back up the symlink '%s' (bytes that are not UTF-8 in its target '%s'): "
			    "the manifest cannot carry them, so no tarball was written; point it at another name, then run "
			    "backup again", shown, lshown);
	}
	return 0;
}

/* Add one path (not following a final symlink) and, for a directory, what it holds. */
static int walk(struct arc_source *s, const struct backup_opts *o, const char *full, const char *rel, char **why)
{
	struct stat st;
	struct mentry *e;

	if (s->man.n >= s->lim->entries)
		return set_why(why, -E2BIG, "the backup set holds more than %llu entries (the profile's [limits] entries); "
			    "narrow the profile's [backup] paths or raise the limit", (unsigned long long)s->lim->entries);
	if (arc_interrupted)
		return set_why(why, -EINTR, "interrupted");
	{
		const char *base = strrchr(full, '/');

		/* a temporary of an interrupted restore is a copy of some key, not config */
		if (startswith(base ? base + 1 : full, RESTORE_TMP_PREFIX)) {
			add_named(&s->skipped, &s->nskipped, full, "temporary left by an interrupted restore");
			return 0;
		}
	}
	if (name_refused(full, rel, NULL, why) < 0)
		return -EINVAL;
	if (lstat(full, &st) < 0) {
		if (errno == EACCES)
			return unreadable(s, o, full, errno);
		if (errno == ENOENT) {
			add_named(&s->missing, &s->nmissing, full, "does not exist");
			return 0;
		}
		return set_why(why, -errno, "cannot stat '%s': %m", full);
	}
	if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		char hex[65];
		uint64_t bytes = 0;
		int r;

		if (fd < 0)
			return errno == EACCES || errno == EPERM ? unreadable(s, o, full, errno)
								: set_why(why, -errno, "cannot open '%s': %m", full);
		r = sha256_fd(fd, hex, &bytes);
		if (r < 0)
			return r == -EACCES ? unreadable(s, o, full, -r)
					    : set_why(why, r, "cannot read '%s': %s", full, strerror(-r));
		if (bytes > s->lim->entry_bytes)
			return set_why(why, -EFBIG, "'%s' holds %llu bytes, more than the %llu of the profile's [limits] entry_bytes; "
				    "narrow the profile's [backup] paths or raise the limit", full, (unsigned long long)bytes,
				    (unsigned long long)s->lim->entry_bytes);
		if (u64_add(s->data_bytes, bytes, &s->data_bytes) < 0 || s->data_bytes > s->lim->data_bytes)
			return set_why(why, -EFBIG, "the backup set holds more than %llu bytes of data (the profile's [limits] "
				    "data_bytes) at '%s'; narrow the profile's [backup] paths or raise the limit",
				    (unsigned long long)s->lim->data_bytes, full);
		e = source_add(s, rel, full, &st);
		e->type = MT_FILE;
		e->size = bytes;
		memcpy(e->sha256, hex, 65);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(full, target, sizeof(target) - 1);

		if (n < 0)
			return set_why(why, -errno, "cannot read the link '%s': %m", full);
		target[n] = '\0';
		if (name_refused(full, rel, target, why) < 0)
			return -EINVAL;
		e = source_add(s, rel, full, &st);
		e->type = MT_SYMLINK;
		e->link = xstrdup(target);
		e->size = 0;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d;
		struct dirent *de;
		char **names = NULL;
		size_t nn = 0;
		int r = 0;

		d = opendir(full);
		if (!d)
			return errno == EACCES ? unreadable(s, o, full, errno) : set_why(why, -errno, "cannot list '%s': %m", full);
		e = source_add(s, rel, full, &st);
		e->type = MT_DIR;
		while ((de = readdir(d))) {
			if (streq(de->d_name, ".") || streq(de->d_name, ".."))
				continue;
			names = realloc(names, (nn + 1) * sizeof(char *));
			if (!names)
				abort();
			names[nn++] = xstrdup(de->d_name);
		}
		closedir(d);
		/* sorted: the same tree gives the same manifest (an empty directory has no array) */
		if (nn > 1)
			qsort(names, nn, sizeof(char *), cmp_str);
		for (size_t i = 0; i < nn; i++) {
			if (r == 0) {
				_cleanup_free_ char *f = xasprintf("%s/%s", full, names[i]);
				_cleanup_free_ char *rr = xasprintf("%s/%s", rel, names[i]);

				r = walk(s, o, f, rr, why);
			}
			free(names[i]);
		}
		free(names);
		return r;
	}
	add_named(&s->skipped, &s->nskipped, full,
		  S_ISSOCK(st.st_mode) ? "socket" : S_ISFIFO(st.st_mode) ? "fifo" :
		  S_ISCHR(st.st_mode) ? "character device" : S_ISBLK(st.st_mode) ? "block device" : "special file");
	return 0;
}

/* The path of a profile entry relative to the root: "~/.ssh/" -> "home/nv/.ssh". */
static char *rel_of(const char *spec, const char *home)
{
	_cleanup_free_ char *abs = profile_expand(spec, home);
	const char *p = abs;
	char *r;
	size_t n;

	while (*p == '/')
		p++;
	r = xstrdup(p);
	n = strlen(r);
	while (n > 0 && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int collect_state(struct arc_source *s, const char *dir, char **why)
{
	_cleanup_close_ int dfd = -1;
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nn = 0;

	if (!d)
		return errno == ENOENT ? 0 : set_why(why, -errno, "cannot list the state directory '%s': %m", dir);
	while ((de = readdir(d)))
		if (state_name_ok(de->d_name)) {
			names = realloc(names, (nn + 1) * sizeof(char *));
			if (!names)
				abort();
			names[nn++] = xstrdup(de->d_name);
		}
	closedir(d);
	if (nn > s->lim->state_records) {
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(names);
		return set_why(why, -E2BIG, "the state directory '%s' holds %zu step records, more than the %llu of the profile's "
			    "[limits] state_records; move old records away or raise the limit", dir, nn,
			    (unsigned long long)s->lim->state_records);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(names);
		return set_why(why, -errno, "cannot open the state directory '%s': %m", dir);
	}
	if (nn > 1) /* qsort must not get NULL, even with no elements */
		qsort(names, nn, sizeof(char *), cmp_str);
	s->man.st = xcalloc(nn, sizeof(*s->man.st));
	s->state = xcalloc(nn, sizeof(*s->state));
	for (size_t i = 0; i < nn; i++) {
		char *data = NULL;
		size_t len = 0;

		/* a FIFO named like a record must not hang the backup: skipped like any non-file */
		/* as root, nor one another user could have written: it would cross the swap as root's */
		if (read_input_at(dfd, names[i], 16 << 20, INPUT_NOFOLLOW | (geteuid() == 0 ? INPUT_OURS : 0), &data,
				  &len, NULL) < 0) {
			free(names[i]);
			continue;
		}
		/* records count toward data_bytes as restore counts them: all of it is held in memory */
		if (u64_add(s->data_bytes, len, &s->data_bytes) < 0 || s->data_bytes > s->lim->data_bytes) {
			free(data);
			for (size_t k = i; k < nn; k++)
				free(names[k]);
			free(names);
			return set_why(why, -EFBIG, "the backup set and the step records in '%s' hold more than %llu bytes (the "
				    "profile's [limits] data_bytes); move old records away or raise the limit", dir,
				    (unsigned long long)s->lim->data_bytes);
		}
		s->man.st[s->man.nst].name = names[i];
		s->man.st[s->man.nst].size = len;
		sha256_buf(data, len, s->man.st[s->man.nst].sha256);
		s->state[s->man.nst] = (struct state_blob){ .name = xstrdup(names[i]), .data = (unsigned char *)data, .len = len };
		s->man.nst++;
	}
	free(names);
	return 0;
}

int backup_collect(const struct backup_opts *o, struct arc_source *s, char **why)
{
	const struct profile *p = o->profile;
	struct strlist tops = { 0 };
	const char *dup = NULL;
	_cleanup_close_ int rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	static struct arc_limits deflim;
	char now[32];
	int r = 0;

	*s = (struct arc_source){ 0 };
	arc_limits_defaults(&deflim);
	s->root = o->root;
	s->lim = p ? &p->limits : &deflim;
	if (rootfd < 0)
		return set_why(why, -errno, "cannot open the root '%s': %m", o->root);
	iso8601_utc(time(NULL), now);
	s->man.host = xstrdup(host_name());
	s->man.home = xstrdup(o->home);
	s->man.created = xstrdup(now);
	{
		/* every path below the root resolves inside it, as if it were "/" (a symlinked
		 * ancestor must not lead out to this host's files) */
		_cleanup_free_ char *hp = root_real(rootfd, o->home[0] == '/' ? o->home + 1 : o->home, true);
		struct stat st;

		s->man.user = hp && stat(hp, &st) == 0 ? root_user_name(o->root, st.st_uid) : NULL;
		if (!s->man.user) {
			const char *b = strrchr(o->home, '/');
			s->man.user = xstrdup(b ? b + 1 : o->home);
		}
	}
	for (size_t i = 0; i < p->backup_paths.n; i++) {
		_cleanup_free_ char *rel = rel_of(p->backup_paths.v[i], o->home);
		bool covered = false;

		if (!*rel || path_check(rel, &(const char *){ NULL }) < 0) {
			strlist_clear(&tops);
			return set_why(why, -EINVAL, "backup path '%s' is not usable: it must name a file or directory below '/'",
				    p->backup_paths.v[i]);
		}
		for (size_t j = 0; j < tops.n; j++)
			if (under(rel, tops.v[j]))
				covered = true;
		if (!covered)
			strlist_add(&tops, rel);
	}
	for (size_t i = 0; i < tops.n && r == 0; i++) {
		_cleanup_free_ char *full = root_real(rootfd, tops.v[i], false);
		_cleanup_free_ char *anc = xstrdup(tops.v[i]);
		struct stat st;

		if (!full) {
			_cleanup_free_ char *shown = join(o->root, tops.v[i]);

			if (errno != ENOENT && errno != ENOTDIR)
				r = set_why(why, -errno, "cannot resolve '%s' inside the root: %m", shown);
			else
				add_named(&s->missing, &s->nmissing, shown, "does not exist");
			continue;
		}
		/* ancestors first ("home", "home/nv"): a fresh root gets them with their owners */
		if (lstat(full, &st) == 0)
			for (char *q = anc; (q = strchr(q, '/')); q++) {
				*q = '\0';
				if (!source_has(s, anc)) {
					_cleanup_free_ char *af = root_real(rootfd, anc, true);

					if (af && stat(af, &st) == 0 && S_ISDIR(st.st_mode)) {
						struct mentry *e = source_add(s, anc, af, &st);
						e->type = MT_DIR;
						e->parent = true;
					}
				}
				*q = '/';
			}
		r = walk(s, o, full, tops.v[i], why);
	}
	strlist_clear(&tops);
	if (r < 0)
		return r;
	if (manifest_index(&s->man, &dup) < 0)
		return set_why(why, -EINVAL, "the backup paths overlap at '%s'; list each directory once in the profile", dup);
	s->req = xcalloc(p->required.n, sizeof(*s->req));
	for (size_t i = 0; i < p->required.n; i++) {
		_cleanup_free_ char *rel = rel_of(p->required.v[i], o->home);
		_cleanup_free_ char *full = root_real(rootfd, rel, false);
		const struct mentry *e = manifest_find(&s->man, rel);
		struct required_file *q = &s->req[s->nreq++];
		struct stat st;

		q->path = xasprintf("/%s", rel);
		if (e && e->type == MT_FILE && e->size > 0) {
			q->ok = true;
			q->size = e->size;
		} else if (!full || lstat(full, &st) < 0)
			q->why = xasprintf("missing: %s", strerror(errno));
		else if (S_ISLNK(st.st_mode))
			q->why = xstrdup("not a regular file (symbolic link)");
		else if (S_ISDIR(st.st_mode))
			q->why = xstrdup("not a regular file (directory)");
		else if (!S_ISREG(st.st_mode))
			q->why = xstrdup("not a regular file");
		else if (st.st_size == 0)
			q->why = xstrdup("empty (0 bytes)");
		else if (!e)
			q->why = xstrdup("not in the backup set (outside the profile's backup paths, or unreadable)");
		else
			q->why = xstrdup("not stored");
	}
	if (o->state_dir)
		r = collect_state(s, o->state_dir, why);
	return r;
}

void arc_source_free(struct arc_source *s)
{
	for (size_t i = 0; i < s->man.n; i++)
		free(s->src[i]);
	free(s->src);
	for (size_t i = 0; i < s->man.nst; i++) {
		free(s->state[i].name);
		free(s->state[i].data);
	}
	free(s->state);
	for (size_t i = 0; i < s->nskipped; i++) {
		free(s->skipped[i].path);
		free(s->skipped[i].reason);
	}
	free(s->skipped);
	for (size_t i = 0; i < s->nmissing; i++) {
		free(s->missing[i].path);
		free(s->missing[i].reason);
	}
	free(s->missing);
	for (size_t i = 0; i < s->nreq; i++) {
		free(s->req[i].path);
		free(s->req[i].why);
	}
	free(s->req);
	free(s->unreadable);
	manifest_free(&s->man);
	*s = (struct arc_source){ 0 };
}

/* ---------------------------------------------------------------- writing ---- */

static void archive_writep(struct archive **a)
{
	if (*a)
		archive_write_free(*a);
}
static void archive_readp(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}
static void entryp(struct archive_entry **e)
{
	if (*e)
		archive_entry_free(*e);
}

/* A libarchive write error by its true cause: a full disk is "no space left", not a failed header. */
static int werr(struct archive *w, char **why, const char *name)
{
	int e = archive_errno(w);

	if (e > 0 && e != EINVAL)
		return set_why(why, -e, "cannot write the tarball (at '%s'): %s%s", name,
			    e == ENOSPC ? "no space left on the device" : e == EDQUOT ? "disk quota exceeded" : strerror(e),
			    e == ENOSPC || e == EDQUOT ? "; free some space there or write it elsewhere" : "");
	return set_why(why, -EIO, "cannot write '%s' into the tarball: %s", name, archive_error_string(w));
}

/* Owner names in the tar headers and ACLs come from the root being backed up, not this host. */
struct name_cb {
	const char *root;
	bool group;
	char *last;
};

static const char *name_lookup(void *data, la_int64_t id)
{
	struct name_cb *c = data;

	free(c->last);
	c->last = c->group ? root_group_name(c->root, (gid_t)id) : root_user_name(c->root, (uid_t)id);
	return c->last;
}

static void name_cleanup(void *data)
{
	struct name_cb *c = data;

	free(c->last);
	c->last = NULL;
}

static int write_blob(struct archive *w, const char *name, const void *data, size_t len, mode_t mode, char **why)
{
	_cleanup_(entryp) struct archive_entry *ae = archive_entry_new();

	archive_entry_set_pathname(ae, name);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, mode);
	archive_entry_set_size(ae, (la_int64_t)len);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_uname(ae, "root");
	archive_entry_set_gname(ae, "root");
	if (archive_write_header(w, ae) != ARCHIVE_OK ||
	    (len && archive_write_data(w, data, len) != (la_ssize_t)len))
		return werr(w, why, name);
	return 0;
}

static int write_entry(struct archive *w, struct archive *disk, const struct mentry *e, const char *src, char **why)
{
	_cleanup_(entryp) struct archive_entry *ae = archive_entry_new();
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (e->type == MT_FILE)
		fd = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	else if (e->type == MT_DIR)
		fd = open(src, O_RDONLY | O_DIRECTORY | (e->parent ? 0 : O_NOFOLLOW) | O_CLOEXEC);
	if ((e->type == MT_FILE || e->type == MT_DIR) && fd < 0)
		return set_why(why, -errno, "cannot open '%s': %m", src);
	if (fd >= 0 ? fstat(fd, &st) < 0 : lstat(src, &st) < 0)
		return set_why(why, -errno, "cannot stat '%s': %m", src);
	if ((e->type == MT_FILE && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != e->size)) ||
	    (e->type == MT_DIR && !S_ISDIR(st.st_mode)) || (e->type == MT_SYMLINK && !S_ISLNK(st.st_mode)))
		return set_why(why, -ESTALE, "'%s' changed while it was being backed up; run backup again", src);
	archive_entry_copy_sourcepath(ae, src);
	if (archive_read_disk_entry_from_file(disk, ae, fd, &st) < ARCHIVE_WARN)
		return set_why(why, -EIO, "cannot read the metadata of '%s': %s", src, archive_error_string(disk));
	archive_entry_copy_pathname(ae, e->path);
	if (e->type == MT_SYMLINK)
		archive_entry_copy_symlink(ae, e->link);
	if (arc_interrupted)
		return set_why(why, -EINTR, "interrupted");
	if (archive_write_header(w, ae) < ARCHIVE_WARN)
		return werr(w, why, e->path);
	if (e->type == MT_FILE) {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		unsigned char dg[EVP_MAX_MD_SIZE];
		unsigned dlen = 0;
		char hex[65];
		char buf[1 << 16];
		uint64_t total = 0;
		int r = 0;

		if (!md)
			return -ENOMEM;
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				r = set_why(why, -errno, "cannot read '%s': %m", src);
				break;
			}
			if (n == 0)
				break;
			total += (uint64_t)n;
			if (total > e->size) {
				r = set_why(why, -ESTALE, "'%s' grew while it was being backed up; run backup again", src);
				break;
			}
			EVP_DigestUpdate(md, buf, (size_t)n);
			if (archive_write_data(w, buf, (size_t)n) != n) {
				r = werr(w, why, e->path);
				break;
			}
		}
		EVP_DigestFinal_ex(md, dg, &dlen);
		EVP_MD_CTX_free(md);
		if (r < 0)
			return r;
		for (unsigned i = 0; i < dlen; i++)
			snprintf(hex + 2 * i, 3, "%02x", dg[i]);
		if (total != e->size || !streq(hex, e->sha256))
			return set_why(why, -ESTALE, "'%s' changed while it was being backed up; run backup again", src);
	}
	return 0;
}

static int write_stream(const struct arc_source *s, int fd, char **why)
{
	struct name_cb ucb = { .root = s->root ? s->root : "/" }, gcb = { .root = s->root ? s->root : "/", .group = true };
	_cleanup_(archive_writep) struct archive *w = archive_write_new();
	_cleanup_(archive_readp) struct archive *disk = archive_read_disk_new();
	json_object *mj = manifest_to_json(&s->man);
	_cleanup_free_ char *text = xasprintf("%s\n", json_object_to_json_string_ext(mj,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	int r;

	json_object_put(mj);
	if (!w || !disk)
		return -ENOMEM;
	archive_read_disk_set_uname_lookup(disk, &ucb, name_lookup, name_cleanup);
	archive_read_disk_set_gname_lookup(disk, &gcb, name_lookup, name_cleanup);
	archive_read_disk_set_symlink_physical(disk);
	archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_FFLAGS | ARCHIVE_READDISK_NO_SPARSE);
	if (archive_write_add_filter_gzip(w) != ARCHIVE_OK || archive_write_set_format_pax(w) != ARCHIVE_OK ||
	    archive_write_open_fd(w, fd) != ARCHIVE_OK)
		return werr(w, why, MANIFEST_NAME);
	r = write_blob(w, MANIFEST_NAME, text, strlen(text), 0600, why);
	for (size_t i = 0; r == 0 && i < s->man.n; i++)
		r = write_entry(w, disk, &s->man.e[i], s->src[i], why);
	if (r == 0 && s->man.nst > 0) {
		_cleanup_(entryp) struct archive_entry *ae = archive_entry_new();

		archive_entry_set_pathname(ae, STATE_DIR_NAME "/");
		archive_entry_set_filetype(ae, AE_IFDIR);
		archive_entry_set_perm(ae, 0700);
		archive_entry_set_mtime(ae, time(NULL), 0);
		if (archive_write_header(w, ae) != ARCHIVE_OK)
			r = werr(w, why, STATE_DIR_NAME);
		for (size_t i = 0; r == 0 && i < s->man.nst; i++) {
			_cleanup_free_ char *n = xasprintf(STATE_DIR_NAME "/%s", s->state[i].name);

			r = write_blob(w, n, s->state[i].data, s->state[i].len, 0600, why);
		}
	}
	if (r < 0)
		return r;
	if (archive_write_close(w) != ARCHIVE_OK)
		return werr(w, why, "the end of the archive");
	return 0;
}

int arc_sweep_tmps(const char *out)
{
	_cleanup_free_ char *d = xstrdup(out), *b = xstrdup(out);
	const char *base = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
	char *sl = strrchr(d, '/');
	_cleanup_close_ int dfd = open(sl ? (sl == d ? "/" : (*sl = '\0', d)) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(base);
	int count = 0;
	DIR *dir;
	struct dirent *de;

	if (dfd < 0)
		return 0;
	dir = fdopendir(dup(dfd));
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		const char *x = de->d_name + n;
		struct stat st;
		bool ours = strncmp(de->d_name, base, n) == 0 && startswith(x, ".tmp.") && strlen(x) == 11;

		/* mkostemp's six characters: letters and digits only */
		for (int i = 5; ours && i < 11; i++)
			if (!((x[i] >= 'a' && x[i] <= 'z') || (x[i] >= 'A' && x[i] <= 'Z') || (x[i] >= '0' && x[i] <= '9')))
				ours = false;
		if (ours && fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    unlinkat(dfd, de->d_name, 0) == 0)
			count++;
	}
	closedir(dir);
	return count;
}

int arc_write_tmp(const struct arc_source *s, const char *out, uid_t uid, gid_t gid, char sha256[65], uint64_t *bytes,
		  char **tmp_out, char **why)
{
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", out);
	_cleanup_close_ int fd = -1;
	struct arc back = { 0 };
	_cleanup_free_ char *bwhy = NULL;
	int r;

	/* what a killed run left under our temporary names (copies of the keys): gone first */
	arc_sweep_tmps(out);
	/* mkostemp: O_CREAT|O_EXCL under a name of our own, never an existing file or link */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return set_why(why, -errno, "cannot create a temporary file beside '%s': %m; choose another --out", out);
	if (fchmod(fd, 0600) < 0 || ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0)) {
		r = set_why(why, -errno, "cannot set the mode or owner of '%s': %m", tmp);
		goto bad;
	}
	r = write_stream(s, fd, why);
	if (r < 0)
		goto bad;
	if (fsync(fd) < 0) {
		r = set_why(why, -errno, "cannot flush '%s' to disk: %m", tmp);
		goto bad;
	}
	/* Read back what reached the disk, through the same validation restore applies. */
	r = arc_load(tmp, s->lim, &back, &bwhy);
	if (r == -EINTR) {
		r = set_why(why, -EINTR, "interrupted");
		arc_free(&back);
		goto bad;
	}
	if (r < 0) {
		r = set_why(why, -EIO, "the tarball read back wrong (%s); it was removed: check the disk and run backup again",
			 bwhy ? bwhy : strerror(-r));
		arc_free(&back);
		goto bad;
	}
	if (back.man.n != s->man.n || back.man.nst != s->man.nst) {
		arc_free(&back);
		r = set_why(why, -EIO, "the tarball read back with a different entry count; it was removed: run backup again");
		goto bad;
	}
	for (size_t i = 0; i < s->man.n; i++)
		if (!streq(back.man.e[i].path, s->man.e[i].path) || back.man.e[i].type != s->man.e[i].type ||
		    !streq(back.man.e[i].sha256, s->man.e[i].sha256)) {
			r = set_why(why, -EIO, "the tarball read back with '%s' different; it was removed: run backup again",
				 s->man.e[i].path);
			arc_free(&back);
			goto bad;
		}
	memcpy(sha256, back.sha256, 65);
	*bytes = back.bytes;
	arc_free(&back);
	*tmp_out = TAKE_PTR(tmp);
	return 0;
bad:
	unlink(tmp);
	return r;
}

int arc_commit(const char *tmp, const char *out, char **why)
{
	int r;

	if (rename(tmp, out) < 0) {
		r = set_why(why, -errno, "cannot rename '%s' to '%s': %m", tmp, out);
		unlink(tmp);
		return r;
	}
	r = fsync_parent_dir(out);
	if (r < 0)
		return set_why(why, r, "cannot flush the directory of '%s': %s", out, strerror(-r));
	return 0;
}

int arc_write(const struct arc_source *s, const char *out, uid_t uid, gid_t gid, char sha256[65], uint64_t *bytes,
	      char **why)
{
	_cleanup_free_ char *tmp = NULL;
	int r = arc_write_tmp(s, out, uid, gid, sha256, bytes, &tmp, why);

	return r < 0 ? r : arc_commit(tmp, out, why);
}

/* ---------------------------------------------------------------- reading ---- */

void arc_free(struct arc *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->items[i].path);
		free(a->items[i].data);
		if (a->items[i].ae)
			archive_entry_free(a->items[i].ae);
	}
	free(a->items);
	for (size_t i = 0; i < a->man.nst; i++) {
		free(a->state ? a->state[i].name : NULL);
		free(a->state ? a->state[i].data : NULL);
	}
	free(a->state);
	manifest_free(&a->man);
	*a = (struct arc){ 0 };
}

static int read_data(struct archive *r, const char *name, uint64_t size, unsigned char **out, char **why)
{
	unsigned char *buf = malloc(size ? size : 1);
	uint64_t have = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		la_ssize_t n = archive_read_data(r, buf + have, size - have > 65536 ? 65536 : size - have);

		if (n < 0) {
			free(buf);
			return set_why(why, -EBADMSG, "the tarball is truncated or corrupt at '%s': %s", name,
				    archive_error_string(r));
		}
		if (n == 0)
			break;
		have += (uint64_t)n;
		if (have == size) {
			/* drain: a stream that holds more than the header says is corrupt */
			char extra;
			n = archive_read_data(r, &extra, 1);
			if (n != 0) {
				free(buf);
				return set_why(why, -EBADMSG, "the tarball is corrupt at '%s': %s", name,
					    n < 0 ? archive_error_string(r) : "more data than its size");
			}
			break;
		}
	}
	if (have != size) {
		free(buf);
		return set_why(why, -EBADMSG, "the tarball is truncated at '%s' (%llu of %llu bytes)", name,
			    (unsigned long long)have, (unsigned long long)size);
	}
	*out = buf;
	return 0;
}

/* One entry's name, type and size against what a backup may hold and the profile's [limits]: its
 * normalised path into *path. `total` is the data read so far, `count` the entries so far. */
static int entry_check(struct archive_entry *ae, const struct arc_limits *lim, uint64_t total, size_t count,
		       char **path, int64_t *size, char **why)
{
	const char *raw = archive_entry_pathname(ae), *pwhy;
	mode_t ft = archive_entry_filetype(ae);

	if (!raw)
		return set_why(why, -EBADMSG, "entry %zu has no name", count);
	*path = path_normalize(raw);
	if (path_check(*path, &pwhy) < 0)
		return set_why(why, -EBADMSG, "refusing entry '%s': %s", raw, pwhy);
	if (ft == AE_IFCHR || ft == AE_IFBLK)
		return set_why(why, -EBADMSG, "refusing entry '%s': device node", raw);
	if (ft == AE_IFIFO || ft == AE_IFSOCK)
		return set_why(why, -EBADMSG, "refusing entry '%s': %s", raw, ft == AE_IFIFO ? "FIFO" : "socket");
	*size = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
	if (*size < 0 || (uint64_t)*size > lim->entry_bytes)
		return set_why(why, -EBADMSG, "refusing entry '%s': %lld bytes, more than the %llu of the profile's [limits] "
			    "entry_bytes", raw, (long long)*size, (unsigned long long)lim->entry_bytes);
	if (total + (uint64_t)*size > lim->data_bytes)
		return set_why(why, -EBADMSG, "refusing entry '%s': the tarball holds more than the %llu bytes of data of "
			    "the profile's [limits] data_bytes", raw, (unsigned long long)lim->data_bytes);
	return 0;
}

/* An entry under swaptool-state/ (`name` after it): a record the manifest lists, once, read and
 * checked against its size and sha256. */
static int load_state_entry(struct archive *r, struct archive_entry *ae, struct arc *a, const char *name,
			    int64_t size, bool *seen_state, uint64_t *total, char **why)
{
	const char *raw = archive_entry_pathname(ae);
	unsigned char *data = NULL;
	char hex[65];
	size_t k;
	int rr;

	for (k = 0; k < a->man.nst; k++)
		if (streq(a->man.st[k].name, name))
			break;
	if (k == a->man.nst || seen_state[k] || archive_entry_filetype(ae) != AE_IFREG || archive_entry_hardlink(ae))
		return set_why(why, -EBADMSG, "refusing entry '%s': %s", raw,
			    k == a->man.nst ? "not listed in the manifest" : seen_state[k] ? "listed twice" : "not a regular file");
	if ((uint64_t)size != a->man.st[k].size)
		return set_why(why, -EBADMSG, "refusing entry '%s': size differs from the manifest", raw);
	rr = read_data(r, raw, (uint64_t)size, &data, why);
	if (rr < 0)
		return rr;
	sha256_buf(data, (size_t)size, hex);
	if (!streq(hex, a->man.st[k].sha256)) {
		free(data);
		return set_why(why, -EBADMSG, "refusing entry '%s': sha256 differs from the manifest", raw);
	}
	seen_state[k] = true;
	a->state[k] = (struct state_blob){ .name = xstrdup(name), .data = data, .len = (size_t)size };
	*total += (uint64_t)size;
	return 0;
}

/* Whether an entry is of the type its manifest entry says (a hard link to the same target); a hard
 * link carries no data, so *size becomes 0. */
static int entry_type_check(struct archive_entry *ae, const struct mentry *m, int64_t *size, char **why)
{
	const char *raw = archive_entry_pathname(ae), *hl = archive_entry_hardlink(ae);
	mode_t ft = archive_entry_filetype(ae);

	switch (m->type) {
	case MT_FILE:
		if (ft != AE_IFREG || hl)
			return set_why(why, -EBADMSG, "refusing entry '%s': the manifest says a regular file", raw);
		break;
	case MT_DIR:
		if (ft != AE_IFDIR)
			return set_why(why, -EBADMSG, "refusing entry '%s': the manifest says a directory", raw);
		break;
	case MT_SYMLINK:
		if (ft != AE_IFLNK || !streq(archive_entry_symlink(ae), m->link))
			return set_why(why, -EBADMSG, "refusing entry '%s': the manifest says a symlink to '%s'", raw, m->link);
		break;
	case MT_HARDLINK: {
		_cleanup_free_ char *t = hl ? path_normalize(hl) : NULL;

		if (!t || !streq(t, m->link))
			return set_why(why, -EBADMSG, "refusing entry '%s': the manifest says a hard link to '%s'", raw, m->link);
		*size = 0;
		break;
	}
	}
	return 0;
}

/* An entry the manifest lists, once, of the type it says; a file's bytes read and checked against
 * its size and sha256; kept in a->items (path is taken). */
static int load_listed_entry(struct archive *r, struct archive_entry *ae, struct arc *a, char **path, int64_t size,
			     bool *seen, uint64_t *total, char **why)
{
	const char *raw = archive_entry_pathname(ae);
	const struct mentry *m = manifest_find(&a->man, *path);
	unsigned char *data = NULL;
	char hex[65];
	int rr;

	if (!m)
		return set_why(why, -EBADMSG, "refusing entry '%s': not listed in the manifest", raw);
	if (seen[m - a->man.e])
		return set_why(why, -EBADMSG, "refusing entry '%s': it appears twice", raw);
	seen[m - a->man.e] = true;
	rr = entry_type_check(ae, m, &size, why);
	if (rr < 0)
		return rr;
	if (m->type == MT_FILE) {
		if ((uint64_t)size != m->size)
			return set_why(why, -EBADMSG, "refusing entry '%s': %lld bytes, the manifest says %llu", raw,
				    (long long)size, (unsigned long long)m->size);
		rr = read_data(r, raw, (uint64_t)size, &data, why);
		if (rr < 0)
			return rr;
		sha256_buf(data, (size_t)size, hex);
		if (!streq(hex, m->sha256)) {
			free(data);
			return set_why(why, -EBADMSG, "refusing entry '%s': sha256 %.16s... differs from the manifest's %.16s...",
				    raw, hex, m->sha256);
		}
		*total += (uint64_t)size;
	}
	a->items = realloc(a->items, (a->n + 1) * sizeof(*a->items));
	if (!a->items)
		abort();
	a->items[a->n++] = (struct arc_item){
		.path = TAKE_PTR(*path), .ae = archive_entry_clone(ae), .data = data, .len = (size_t)size, .m = m,
	};
	return 0;
}

static int load_entries(struct archive *r, const struct arc_limits *lim, struct arc *a, bool *seen, bool *seen_state,
			char **why)
{
	struct archive_entry *ae;
	uint64_t total = 0;
	size_t count = 0;

	for (;;) {
		int st = archive_read_next_header(r, &ae), rr;
		_cleanup_free_ char *path = NULL;
		int64_t size = 0;

		if (st == ARCHIVE_EOF)
			return 0;
		if (st != ARCHIVE_OK)
			return set_why(why, -EBADMSG, "the tarball is truncated or corrupt after %zu entries: %s", count,
				    archive_error_string(r));
		/* the manifest's entries, its state records and the swaptool-state/ directory */
		if (++count > a->man.n + a->man.nst + 1)
			return set_why(why, -EBADMSG, "the tarball holds more entries than its manifest lists (%zu); refusing it",
				    a->man.n + a->man.nst + 1);
		rr = entry_check(ae, lim, total, count, &path, &size, why);
		if (rr == 0 && streq(path, STATE_DIR_NAME)) {
			if (archive_entry_filetype(ae) != AE_IFDIR)
				return set_why(why, -EBADMSG, "refusing entry '%s': not a directory", archive_entry_pathname(ae));
			continue;
		}
		if (rr == 0 && startswith(path, STATE_DIR_NAME "/"))
			rr = load_state_entry(r, ae, a, path + strlen(STATE_DIR_NAME) + 1, size, seen_state, &total, why);
		else if (rr == 0)
			rr = load_listed_entry(r, ae, a, &path, size, seen, &total, why);
		if (rr < 0)
			return rr;
	}
}

/* The whole gzip stream, trailer included: the tar reader stops at the end-of-archive blocks
 * and never reaches the CRC-32 and length in the last 8 bytes, so a damaged tail would pass. */
static int gzip_check(int fd, const char *path, uint64_t cap, char **why)
{
	_cleanup_(archive_readp) struct archive *r = archive_read_new();
	struct archive_entry *ae;
	char buf[65536];
	unsigned char tail[8];
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t len = 0;
	struct stat st;
	la_ssize_t n;

	if (!r)
		return -ENOMEM;
	archive_read_support_filter_gzip(r);
	archive_read_support_format_raw(r);
	if (archive_read_open_fd(r, fd, 65536) != ARCHIVE_OK || archive_read_next_header(r, &ae) != ARCHIVE_OK)
		return set_why(why, -EBADMSG, "'%s' is not a gzip tarball: %s", path, archive_error_string(r));
	if (archive_filter_code(r, 0) != ARCHIVE_FILTER_GZIP)
		return set_why(why, -EBADMSG, "'%s' is not gzip-compressed: a swaptool backup is a gzip pax tarball", path);
	while ((n = archive_read_data(r, buf, sizeof(buf))) > 0) {
		crc = crc32(crc, (const Bytef *)buf, (uInt)n);
		len += (uint64_t)n;
		/* while streaming: a few MiB of gzip can expand to terabytes */
		if (len > cap)
			return set_why(why, -EBADMSG, "'%s' expands to more than %llu bytes (the profile's [limits] expanded_bytes): "
				    "refusing it as a possible gzip bomb", path, (unsigned long long)cap);
		if (arc_interrupted)
			return set_why(why, -EINTR, "interrupted");
	}
	if (n < 0)
		return set_why(why, -EBADMSG, "'%s' is a truncated or corrupt gzip stream: %s", path, archive_error_string(r));
	/* RFC 1952: the member ends with CRC-32 and ISIZE (length mod 2^32), little-endian */
	if (fstat(fd, &st) < 0 || st.st_size < 18 || pread(fd, tail, 8, st.st_size - 8) != 8)
		return set_why(why, -EBADMSG, "'%s' is too short for a gzip stream", path);
	if ((tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24) != (uint32_t)crc ||
	    (tail[4] | tail[5] << 8 | tail[6] << 16 | (uint32_t)tail[7] << 24) != (uint32_t)len)
		return set_why(why, -EBADMSG, "'%s' is a corrupt gzip stream: its CRC-32 or length does not match the data", path);
	return 0;
}

int arc_load(const char *path, const struct arc_limits *lim, struct arc *a, char **why)
{
	struct stat st = { 0 };
	_cleanup_close_ int fd = open_input_at(AT_FDCWD, path, 0, 0, &st, NULL);
	_cleanup_(archive_readp) struct archive *r = NULL;
	_cleanup_free_ bool *seen = NULL, *seen_state = NULL;
	_cleanup_free_ unsigned char *mtext = NULL;
	struct archive_entry *ae;
	struct arc_limits deflim;
	unsigned char magic[2];
	int64_t msize;
	int rr;

	*a = (struct arc){ 0 };
	if (!lim) {
		arc_limits_defaults(&deflim);
		lim = &deflim;
	}
	/* What it is before reading it: a FIFO or device would block or never end, and a
	 * 2 TB disk image passed by mistake would be hashed for hours. */
	if (fd == -ENODEV || fd == -EISDIR)
		return set_why(why, -EINVAL, "'%s' is a %s, not a tarball: name the backup's .tar.gz file", path,
			    file_kind(st.st_mode));
	if (fd < 0)
		return set_why(why, fd, "cannot open '%s': %s", path, strerror(-fd));
	if ((uint64_t)st.st_size > lim->tarball_bytes)
		return set_why(why, -EFBIG, "'%s' is %llu bytes, more than the %llu a backup tarball may have (the profile's "
			    "[limits] tarball_bytes): is it the backup's .tar.gz?", path, (unsigned long long)st.st_size,
			    (unsigned long long)lim->tarball_bytes);
	/* RFC 1952: a gzip member starts with 1f 8b */
	if (pread(fd, magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return set_why(why, -EBADMSG, "'%s' is not gzip-compressed: a swaptool backup is a gzip pax tarball", path);
	rr = sha256_fd(fd, a->sha256, &a->bytes);
	if (rr < 0)
		return set_why(why, rr, "cannot read '%s': %s", path, strerror(-rr));
	if (lseek(fd, 0, SEEK_SET) < 0)
		return set_why(why, -errno, "cannot rewind '%s': %m", path);
	rr = gzip_check(fd, path, lim->expanded_bytes, why);
	if (rr < 0)
		return rr;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return set_why(why, -errno, "cannot rewind '%s': %m", path);
	r = archive_read_new();
	if (!r)
		return -ENOMEM;
	archive_read_support_filter_gzip(r);
	archive_read_support_format_tar(r);
	if (archive_read_open_fd(r, fd, 65536) != ARCHIVE_OK)
		return set_why(why, -EBADMSG, "'%s' is not a gzip tarball: %s", path, archive_error_string(r));
	if (archive_read_next_header(r, &ae) != ARCHIVE_OK)
		return set_why(why, -EBADMSG, "'%s' is not a readable tarball: %s", path, archive_error_string(r));
	if (!streq(archive_entry_pathname(ae), MANIFEST_NAME) || archive_entry_filetype(ae) != AE_IFREG)
		return set_why(why, -EBADMSG, "'%s' does not start with %s: not a swaptool backup", path, MANIFEST_NAME);
	msize = archive_entry_size(ae);
	if (msize <= 0 || (uint64_t)msize > ARC_MAX_MANIFEST)
		return set_why(why, -EBADMSG, "the manifest in '%s' has a bad size (%lld bytes)", path, (long long)msize);
	rr = read_data(r, MANIFEST_NAME, (uint64_t)msize, &mtext, why);
	if (rr < 0)
		return rr;
	rr = manifest_parse((const char *)mtext, (size_t)msize, &a->man, why);
	if (rr < 0)
		return rr;
	if (a->man.n > lim->entries)
		return set_why(why, -EBADMSG, "the manifest lists %zu entries, more than the limit of %llu (the profile's [limits] "
			    "entries)", a->man.n, (unsigned long long)lim->entries);
	if (a->man.nst > lim->state_records)
		return set_why(why, -EBADMSG, "the manifest lists %zu state records, more than the limit of %llu (the profile's "
			    "[limits] state_records)", a->man.nst, (unsigned long long)lim->state_records);
	seen = xcalloc(a->man.n, sizeof(bool));
	seen_state = xcalloc(a->man.nst, sizeof(bool));
	a->state = xcalloc(a->man.nst, sizeof(*a->state));
	rr = load_entries(r, lim, a, seen, seen_state, why);
	if (rr < 0)
		return rr;
	if (archive_read_close(r) != ARCHIVE_OK)
		return set_why(why, -EBADMSG, "the tarball is corrupt at its end: %s", archive_error_string(r));
	for (size_t i = 0; i < a->man.n; i++)
		if (!seen[i])
			return set_why(why, -EBADMSG, "the manifest lists '%s' but the tarball does not hold it (truncated?)",
				    a->man.e[i].path);
	for (size_t i = 0; i < a->man.nst; i++)
		if (!seen_state[i])
			return set_why(why, -EBADMSG, "the manifest lists the state record '%s' but the tarball does not hold it",
				    a->man.st[i].name);
	/* Paths through links of the same archive, and hard links out of the set. */
	for (size_t i = 0; i < a->man.n; i++) {
		const struct mentry *e = &a->man.e[i];
		_cleanup_free_ char *pre = xstrdup(e->path);

		for (char *q = pre; (q = strchr(q, '/')); q++) {
			const struct mentry *up;

			*q = '\0';
			up = manifest_find(&a->man, pre);
			if (up && up->type != MT_DIR)
				return set_why(why, -EBADMSG, "refusing entry '%s': it goes through the %s '%s' of the same archive",
					    e->path, up->type == MT_SYMLINK ? "symlink" : "non-directory", pre);
			*q = '/';
		}
		if (e->type == MT_HARDLINK) {
			const struct mentry *t = manifest_find(&a->man, e->link);
			const char *pw;

			if (path_check(e->link, &pw) < 0 || !t || t->type != MT_FILE)
				return set_why(why, -EBADMSG, "refusing entry '%s': hard link to '%s', out of the backup set",
					    e->path, e->link);
		}
	}
	return 0;
}
