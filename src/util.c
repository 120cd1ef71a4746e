/* SPDX-License-Identifier: MIT */
/* Small shared helpers: allocation, whole-file reads, atomic writes, SHA-256, host and home. */
#include "util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

int set_why(char **why, int r, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return r;
	free(*why);
	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) < 0)
		abort();
	va_end(ap);
	return r;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		abort();
	return d;
}

char *str_replace_all(const char *s, const char *from, const char *to)
{
	size_t flen = strlen(from), tlen = strlen(to), n = 0;
	const char *p;
	char *d, *o;

	if (!flen)
		return xstrdup(s);
	for (p = s; (p = strstr(p, from)); p += flen)
		n++;
	o = d = xcalloc(strlen(s) + n * tlen + 1, 1);
	for (p = s; n--; ) {
		const char *m = strstr(p, from);

		memcpy(d, p, (size_t)(m - p));
		d += m - p;
		memcpy(d, to, tlen);
		d += tlen;
		p = m + flen;
	}
	strcpy(d, p);
	return o;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		abort();
	return p;
}

int read_file_all(const char *path, size_t max, char **out, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = 4096;

	if (fd < 0)
		return -errno;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (have == cap) {
			char *nb;

			if (cap >= max)
				return -EFBIG;
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	buf[have] = '\0';
	if (len)
		*len = have;
	*out = TAKE_PTR(buf);
	return 0;
}

int read_attr(const char *path, char **out)
{
	char *s;
	size_t n;
	int r = read_file_all(path, 65536, &s, &n);

	if (r < 0)
		return r;
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	*out = s;
	return 0;
}

int fsync_parent_dir(const char *path)
{
	_cleanup_free_ char *copy = xstrdup(path);
	_cleanup_close_ int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	return fsync(dfd) < 0 ? -errno : 0;
}

int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* 0: the file ended before the caller said it would */
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

bool buf_is_zero(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	size_t i = 0;

	/* eight bytes at a time where the buffer is aligned for it (I/O buffers are) */
	if (((uintptr_t)b & 7) == 0)
		for (; i + 8 <= n; i += 8)
			if (*(const uint64_t *)(b + i))
				return false;
	for (; i < n; i++)
		if (b[i])
			return false;
	return true;
}

int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n;
	}
	return 0;
}

int read_all(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n;
	}
	return 0;
}

void tail_append(char *tail, size_t cap, size_t *len, const char *buf, size_t n)
{
	if (n >= cap) {
		memcpy(tail, buf + n - cap, cap);
		*len = cap;
		return;
	}
	if (*len + n > cap) {
		size_t drop = *len + n - cap;
		memmove(tail, tail + drop, *len - drop);
		*len -= drop;
	}
	memcpy(tail + *len, buf, n);
	*len += n;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	_cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = fchmod(fd, mode) < 0 ? -errno : write_all(fd, data, len);
	if (r == 0 && (fsync(fd) < 0 || rename(tmp, path) < 0))
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	return fsync_parent_dir(path);
}

int mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void hex_encode(const unsigned char *md, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * len] = '\0';
}

int sha256_buf(const void *buf, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;

	if (!EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL))
		return -EIO;
	hex_encode(md, mdlen, hex);
	return 0;
}

int sha256_fd(int fd, char hex[65], uint64_t *bytes)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	uint64_t total = 0;
	static __thread char buf[1 << 16];
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		r = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		total += (uint64_t)n;
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen)) {
		r = -EIO;
		goto out;
	}
	hex_encode(md, mdlen, hex);
	if (bytes)
		*bytes = total;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double mono_s(void)
{
	return mono_ns() / 1e9;
}

int sha256_path(const char *path, char hex[65], uint64_t *bytes)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	return sha256_fd(fd, hex, bytes);
}

const char *host_name(void)
{
	static char name[HOST_NAME_MAX + 1];

	if (!name[0]) {
		if (gethostname(name, sizeof(name) - 1) < 0 || !name[0])
			strcpy(name, "localhost");
		name[strcspn(name, ".")] = '\0';
	}
	return name;
}

void iso8601_utc(time_t t, char buf[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int node_home(const char *override, char **out)
{
	const char *sudo_user = getenv("SUDO_USER");
	const char *home = getenv("HOME");

	if (override && *override) {
		*out = xstrdup(override);
		return 0;
	}
	if (sudo_user && *sudo_user && !streq(sudo_user, "root")) {
		struct passwd *pw = getpwnam(sudo_user);

		if (pw && pw->pw_dir) {
			*out = xstrdup(pw->pw_dir);
			return 0;
		}
	}
	if (home && *home) {
		*out = xstrdup(home);
		return 0;
	}
	return -ENOENT;
}

const char *file_kind(mode_t m)
{
	return S_ISREG(m) ? "regular file" : S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symbolic link" : S_ISFIFO(m) ? "FIFO"
	       : S_ISCHR(m) ? "character device" : S_ISBLK(m) ? "block device" : S_ISSOCK(m) ? "socket" : "special file";
}

int open_input_at(int dirfd, const char *path, uint64_t max_bytes, unsigned flags, struct stat *stp, char **why)
{
	int oflags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (flags & INPUT_NOFOLLOW ? O_NOFOLLOW : 0);
	_cleanup_close_ int fd = openat(dirfd, path, oflags);
	struct stat tmp, *st = stp ? stp : &tmp;
	int fl;

	if (fd < 0) {
		int r = -errno;
		if (r == -ELOOP && (flags & INPUT_NOFOLLOW))
			return set_why(why, r, "it is a symbolic link; name the file itself");
		return set_why(why, r, "%s", strerror(-r));
	}
	if (fstat(fd, st) < 0)
		return set_why(why, -errno, "%s", strerror(errno));
	if (S_ISDIR(st->st_mode))
		return set_why(why, -EISDIR, "it is a directory, not a file");
	if (!S_ISREG(st->st_mode) && !(S_ISBLK(st->st_mode) && (flags & INPUT_ALLOW_BLOCK)))
		return set_why(why, -ENODEV, "it is a %s, not a regular file", file_kind(st->st_mode));
	if ((flags & INPUT_OURS) && stat_trusted(st, "it", geteuid(), false, why) < 0)
		return -EPERM;
	if (max_bytes && S_ISREG(st->st_mode) && (uint64_t)st->st_size > max_bytes)
		return set_why(why, -EFBIG, "it is %jd bytes, more than the %" PRIu64 " such a file may have",
			       (intmax_t)st->st_size, max_bytes);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return set_why(why, -errno, "%s", strerror(errno));
	return TAKE_FD(fd);
}

int open_input(const char *path, uint64_t max_bytes, unsigned flags, char **why)
{
	return open_input_at(AT_FDCWD, path, max_bytes, flags, NULL, why);
}

int read_input(const char *path, size_t max_bytes, unsigned flags, char **out, size_t *len, char **why)
{
	return read_input_at(AT_FDCWD, path, max_bytes, flags, out, len, why);
}

int read_input_at(int dirfd, const char *path, size_t max_bytes, unsigned flags, char **out, size_t *len, char **why)
{
	_cleanup_close_ int fd = open_input_at(dirfd, path, max_bytes, flags, NULL, why);
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = 4096;

	if (fd < 0)
		return fd;
	buf = malloc(cap + 1);
	if (!buf)
		return set_why(why, -ENOMEM, "%s", strerror(ENOMEM));
	for (;;) {
		ssize_t n;

		if (have == cap) {
			char *nb;

			/* one byte over the cap tells a file that grew from one that fills it exactly */
			if (max_bytes && cap > max_bytes)
				return set_why(why, -EFBIG, "it grew past the %zu bytes such a file may have", max_bytes);
			cap = max_bytes && cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return set_why(why, -ENOMEM, "%s", strerror(ENOMEM));
			buf = nb;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return set_why(why, -errno, "%s", strerror(errno));
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (max_bytes && have > max_bytes)
		return set_why(why, -EFBIG, "it grew past the %zu bytes such a file may have", max_bytes);
	buf[have] = '\0';
	if (len)
		*len = have;
	*out = TAKE_PTR(buf);
	return 0;
}

size_t utf8_seq_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, c = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, c = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, c = p[0] & 0x07;
	else
		return 0; /* continuation byte, C0/C1 (overlong), F5-FF */
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) /* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
		return 0;
	return n;
}

bool utf8_valid(const char *s)
{
	for (size_t n; *s; s += n)
		if (!(n = utf8_seq_len(s)))
			return false;
	return true;
}

char *utf8_sanitize(const char *s)
{
	/* each bad byte becomes 3 bytes at most */
	char *out = xcalloc(strlen(s) * 3 + 1, 1), *o = out;

	while (*s) {
		size_t n = utf8_seq_len(s);

		if (n) {
			memcpy(o, s, n);
			o += n, s += n;
		} else {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3, s++;
		}
	}
	*o = '\0';
	return out;
}

char *str_escape(const char *s)
{
	/* each byte becomes 4 bytes at most */
	char *out = xcalloc(strlen(s) * 4 + 1, 1), *o = out;

	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = utf8_seq_len(s);

		if (c == '\\' || c == '\n' || c == '\t' || c == 0x1b) {
			*o++ = '\\';
			*o++ = c == '\n' ? 'n' : c == '\t' ? 't' : c == 0x1b ? 'e' : '\\';
			s++;
		} else if (!n || c < 0x20 || c == 0x7f) {
			o += sprintf(o, "\\x%02x", c);
			s++;
		} else {
			memcpy(o, s, n);
			o += n, s += n;
		}
	}
	*o = '\0';
	return out;
}

void strlist_add(struct strlist *l, const char *s)
{
	l->v = realloc(l->v, (l->n + 1) * sizeof(char *));
	if (!l->v)
		abort();
	l->v[l->n++] = xstrdup(s);
}

void strlist_clear(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct strlist){ 0 };
}

/* "uid 65534 (nobody)", or "uid 1234" without a passwd entry. */
static char *uid_text(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	return pw ? xasprintf("uid %u (%s)", (unsigned)uid, pw->pw_name) : xasprintf("uid %u", (unsigned)uid);
}

static char *owners_text(uid_t owner)
{
	_cleanup_free_ char *o = owner ? uid_text(owner) : NULL;

	return owner ? xasprintf("%s or root", o) : xstrdup("root");
}

int stat_trusted(const struct stat *st, const char *what, uid_t owner, bool inner, char **why)
{
	mode_t w = st->st_mode & (S_IWGRP | S_IWOTH);

	if (st->st_uid != 0 && st->st_uid != owner) {
		_cleanup_free_ char *u = uid_text(st->st_uid), *o = owners_text(owner);
		return set_why(why, -EPERM, "%s%s is owned by %s, not by %s", S_ISLNK(st->st_mode) ? "the symbolic link " : "",
			       what, u, o);
	}
	if (S_ISLNK(st->st_mode) || !w || (inner && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)))
		return 0;
	return set_why(why, -EPERM, "%s is writable by %s (mode %04o)", what,
		       w == (S_IWGRP | S_IWOTH) ? "group and others" : w == S_IWGRP ? "its group" : "others",
		       (unsigned)(st->st_mode & 07777));
}
