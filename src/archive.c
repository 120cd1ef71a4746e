/* SPDX-License-Identifier: MIT */
/* Config tarballs through libarchive: backup set walk, atomic write with read-back, whole-archive
 * validation, and a safe extraction under a root with an undo archive. */
#include "util.h"
#include "tarball.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <openssl/evp.h>
#include <pwd.h>
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

static char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	return pw ? xstrdup(pw->pw_name) : xasprintf("%u", (unsigned)uid);
}

static char *group_name(gid_t gid)
{
	struct group *gr = getgrgid(gid);
	return gr ? xstrdup(gr->gr_name) : xasprintf("%u", (unsigned)gid);
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
	e->user = user_name(st->st_uid);
	e->group = group_name(st->st_gid);
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

/* Add one path (not following a final symlink) and, for a directory, what it holds. */
static int walk(struct arc_source *s, const struct backup_opts *o, const char *full, const char *rel, char **why)
{
	struct stat st;
	struct mentry *e;

	if (s->man.n >= ARC_MAX_ENTRIES)
		return set_why(why, -E2BIG, "the backup set holds more than %d entries; narrow the profile's [backup] paths",
			    ARC_MAX_ENTRIES);
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
		if (u64_add(s->data_bytes, bytes, &s->data_bytes) < 0 || s->data_bytes > ARC_MAX_BYTES)
			return set_why(why, -EFBIG, "the backup set holds more than 256 MiB of data ('%s'); narrow the profile's [backup] paths",
				    full);
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
	if (nn > 1) /* qsort must not get NULL, even with no elements */
		qsort(names, nn, sizeof(char *), cmp_str);
	s->man.st = xcalloc(nn, sizeof(*s->man.st));
	s->state = xcalloc(nn, sizeof(*s->state));
	for (size_t i = 0; i < nn; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, names[i]);
		struct stat st;
		char *data = NULL;
		size_t len = 0;

		if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode) || read_file_all(p, 16 << 20, &data, &len) < 0) {
			free(names[i]);
			continue;
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
	char now[32];
	int r = 0;

	*s = (struct arc_source){ 0 };
	iso8601_utc(time(NULL), now);
	s->man.host = xstrdup(host_name());
	s->man.home = xstrdup(o->home);
	s->man.created = xstrdup(now);
	{
		_cleanup_free_ char *hp = join(o->root, o->home[0] == '/' ? o->home + 1 : o->home);
		struct stat st;

		s->man.user = stat(hp, &st) == 0 ? user_name(st.st_uid) : NULL;
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
		_cleanup_free_ char *full = join(o->root, tops.v[i]);
		_cleanup_free_ char *anc = xstrdup(tops.v[i]);
		struct stat st;

		/* ancestors first ("home", "home/nv"): a fresh root gets them with their owners */
		if (lstat(full, &st) == 0)
			for (char *q = anc; (q = strchr(q, '/')); q++) {
				*q = '\0';
				if (!source_has(s, anc)) {
					_cleanup_free_ char *af = join(o->root, anc);

					if (stat(af, &st) == 0 && S_ISDIR(st.st_mode)) {
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
		_cleanup_free_ char *full = join(o->root, rel);
		const struct mentry *e = manifest_find(&s->man, rel);
		struct required_file *q = &s->req[s->nreq++];
		struct stat st;

		q->path = xasprintf("/%s", rel);
		if (e && e->type == MT_FILE && e->size > 0) {
			q->ok = true;
			q->size = e->size;
		} else if (lstat(full, &st) < 0)
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
		return set_why(why, -EIO, "cannot write '%s' into the tarball: %s", name, archive_error_string(w));
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
	if (archive_write_header(w, ae) < ARCHIVE_WARN)
		return set_why(why, -EIO, "cannot write the header of '%s': %s", e->path, archive_error_string(w));
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
				r = set_why(why, -EIO, "cannot write '%s' into the tarball: %s", e->path, archive_error_string(w));
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
	_cleanup_(archive_writep) struct archive *w = archive_write_new();
	_cleanup_(archive_readp) struct archive *disk = archive_read_disk_new();
	json_object *mj = manifest_to_json(&s->man);
	_cleanup_free_ char *text = xasprintf("%s\n", json_object_to_json_string_ext(mj,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	int r;

	json_object_put(mj);
	if (!w || !disk)
		return -ENOMEM;
	archive_read_disk_set_standard_lookup(disk);
	archive_read_disk_set_symlink_physical(disk);
	archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_FFLAGS | ARCHIVE_READDISK_NO_SPARSE);
	if (archive_write_add_filter_gzip(w) != ARCHIVE_OK || archive_write_set_format_pax(w) != ARCHIVE_OK ||
	    archive_write_open_fd(w, fd) != ARCHIVE_OK)
		return set_why(why, -EIO, "cannot start the tarball: %s", archive_error_string(w));
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
			r = set_why(why, -EIO, "cannot write into the tarball: %s", archive_error_string(w));
		for (size_t i = 0; r == 0 && i < s->man.nst; i++) {
			_cleanup_free_ char *n = xasprintf(STATE_DIR_NAME "/%s", s->state[i].name);

			r = write_blob(w, n, s->state[i].data, s->state[i].len, 0600, why);
		}
	}
	if (r < 0)
		return r;
	if (archive_write_close(w) != ARCHIVE_OK)
		return set_why(why, -EIO, "cannot finish the tarball: %s", archive_error_string(w));
	return 0;
}

int arc_write(const struct arc_source *s, const char *out, uid_t uid, gid_t gid, char sha256[65], uint64_t *bytes,
	      char **why)
{
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", out);
	_cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
	struct arc back = { 0 };
	_cleanup_free_ char *bwhy = NULL;
	int r;

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
	r = arc_load(tmp, &back, &bwhy);
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
	if (rename(tmp, out) < 0) {
		r = set_why(why, -errno, "cannot rename '%s' to '%s': %m", tmp, out);
		goto bad;
	}
	r = fsync_parent_dir(out);
	if (r < 0)
		return set_why(why, r, "cannot flush the directory of '%s': %s", out, strerror(-r));
	return 0;
bad:
	unlink(tmp);
	return r;
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

static int load_entries(struct archive *r, struct arc *a, bool *seen, bool *seen_state, char **why)
{
	struct archive_entry *ae;
	uint64_t total = 0;
	size_t count = 0;
	const char *pwhy;

	for (;;) {
		int st = archive_read_next_header(r, &ae);
		const char *raw, *hl;
		_cleanup_free_ char *path = NULL;
		const struct mentry *m;
		mode_t ft;
		unsigned char *data = NULL;
		int64_t size;
		char hex[65];
		int rr;

		if (st == ARCHIVE_EOF)
			return 0;
		if (st != ARCHIVE_OK)
			return set_why(why, -EBADMSG, "the tarball is truncated or corrupt after %zu entries: %s", count,
				    archive_error_string(r));
		if (++count > (size_t)ARC_MAX_ENTRIES + 256 + 1)
			return set_why(why, -EBADMSG, "the tarball holds more than %d entries; refusing it", ARC_MAX_ENTRIES);
		raw = archive_entry_pathname(ae);
		if (!raw)
			return set_why(why, -EBADMSG, "entry %zu has no name", count);
		path = path_normalize(raw);
		if (path_check(path, &pwhy) < 0)
			return set_why(why, -EBADMSG, "refusing entry '%s': %s", raw, pwhy);
		ft = archive_entry_filetype(ae);
		hl = archive_entry_hardlink(ae);
		if (ft == AE_IFCHR || ft == AE_IFBLK)
			return set_why(why, -EBADMSG, "refusing entry '%s': device node", raw);
		if (ft == AE_IFIFO || ft == AE_IFSOCK)
			return set_why(why, -EBADMSG, "refusing entry '%s': %s", raw, ft == AE_IFIFO ? "FIFO" : "socket");
		size = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
		if (size < 0 || (uint64_t)size > ARC_MAX_BYTES || total + (uint64_t)size > ARC_MAX_BYTES)
			return set_why(why, -EBADMSG, "refusing entry '%s': more than 256 MiB of data in the tarball", raw);
		if (streq(path, STATE_DIR_NAME)) {
			if (ft != AE_IFDIR)
				return set_why(why, -EBADMSG, "refusing entry '%s': not a directory", raw);
			continue;
		}
		if (startswith(path, STATE_DIR_NAME "/")) {
			const char *name = path + strlen(STATE_DIR_NAME) + 1;
			size_t k;

			for (k = 0; k < a->man.nst; k++)
				if (streq(a->man.st[k].name, name))
					break;
			if (k == a->man.nst || seen_state[k] || ft != AE_IFREG || hl)
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
			total += (uint64_t)size;
			continue;
		}
		m = manifest_find(&a->man, path);
		if (!m)
			return set_why(why, -EBADMSG, "refusing entry '%s': not listed in the manifest", raw);
		if (seen[m - a->man.e])
			return set_why(why, -EBADMSG, "refusing entry '%s': it appears twice", raw);
		seen[m - a->man.e] = true;
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
			size = 0;
			break;
		}
		}
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
			total += (uint64_t)size;
		}
		a->items = realloc(a->items, (a->n + 1) * sizeof(*a->items));
		if (!a->items)
			abort();
		a->items[a->n++] = (struct arc_item){
			.path = TAKE_PTR(path), .ae = archive_entry_clone(ae), .data = data, .len = (size_t)size, .m = m,
		};
	}
}

/* The whole gzip stream, trailer included: the tar reader stops at the end-of-archive blocks
 * and never reaches the CRC-32 and length in the last 8 bytes, so a damaged tail would pass. */
static int gzip_check(int fd, const char *path, char **why)
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

int arc_load(const char *path, struct arc *a, char **why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(archive_readp) struct archive *r = NULL;
	_cleanup_free_ bool *seen = NULL, *seen_state = NULL;
	_cleanup_free_ unsigned char *mtext = NULL;
	struct archive_entry *ae;
	struct stat st;
	int64_t msize;
	int rr;

	*a = (struct arc){ 0 };
	if (fd < 0)
		return set_why(why, -errno, "cannot open '%s': %m", path);
	if (fstat(fd, &st) < 0)
		return set_why(why, -errno, "cannot stat '%s': %m", path);
	if (!S_ISREG(st.st_mode))
		return set_why(why, -EINVAL, "'%s' is not a regular file", path);
	rr = sha256_fd(fd, a->sha256, &a->bytes);
	if (rr < 0)
		return set_why(why, rr, "cannot read '%s': %s", path, strerror(-rr));
	if (lseek(fd, 0, SEEK_SET) < 0)
		return set_why(why, -errno, "cannot rewind '%s': %m", path);
	rr = gzip_check(fd, path, why);
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
	seen = xcalloc(a->man.n, sizeof(bool));
	seen_state = xcalloc(a->man.nst, sizeof(bool));
	a->state = xcalloc(a->man.nst, sizeof(*a->state));
	rr = load_entries(r, a, seen, seen_state, why);
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
