/* SPDX-License-Identifier: MIT */
/* SSHSIG over Ed25519 with OpenSSL libcrypto: key files, ssh-agent, armour, verify, allowed_signers. */
#include "util.h"
#include "sign.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <strings.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#define KEY_MAGIC "openssh-key-v1" /* followed by a NUL: 15 bytes */
#define KEY_BEGIN "-----BEGIN OPENSSH PRIVATE KEY-----"
#define KEY_END "-----END OPENSSH PRIVATE KEY-----"
#define SIG_BEGIN "-----BEGIN SSH SIGNATURE-----"
#define SIG_END "-----END SSH SIGNATURE-----"
#define SIG_MAGIC "SSHSIG" /* 6 bytes, no length, no NUL (PROTOCOL.sshsig) */
#define SIG_WRAP 70        /* ssh-keygen wraps the armour at 70 columns */
#define KEY_TYPE "ssh-ed25519"
#define AGENTC_SIGN_REQUEST 13  /* draft-miller-ssh-agent §3.6 */
#define AGENT_SIGN_RESPONSE 14
#define AGENT_MAX_REPLY (256 * 1024) /* OpenSSH's own limit on an agent message */

/* ---- base64 ---- */

char *b64_encode(const unsigned char *buf, size_t len)
{
	char *out = xcalloc(4 * ((len + 2) / 3) + 1, 1);

	EVP_EncodeBlock((unsigned char *)out, buf, (int)len);
	return out;
}

static int b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int b64_decode(const char *s, size_t slen, unsigned char **out, size_t *outlen)
{
	_cleanup_free_ unsigned char *buf = xcalloc(slen / 4 * 3 + 3, 1);
	size_t n = 0, pad = 0;
	uint32_t acc = 0;
	unsigned bits = 0;

	for (size_t i = 0; i < slen; i++) {
		int c = (unsigned char)s[i], v;

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad)
			return -EBADMSG; /* data after padding */
		v = b64_value(c);
		if (v < 0)
			return -EBADMSG;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* 2 or 4 leftover bits are the zero fill of a short group; 6 cannot happen in valid base64. */
	if (bits >= 6 || pad > 2 || acc != 0)
		return -EBADMSG;
	*outlen = n;
	*out = TAKE_PTR(buf);
	return 0;
}

/* ---- SSH wire buffers (RFC 4251 §5) ---- */

struct rbuf {
	const unsigned char *p;
	size_t len;
};

static int get_u32(struct rbuf *b, uint32_t *v)
{
	if (b->len < 4)
		return -EBADMSG;
	*v = (uint32_t)b->p[0] << 24 | (uint32_t)b->p[1] << 16 | (uint32_t)b->p[2] << 8 | b->p[3];
	b->p += 4, b->len -= 4;
	return 0;
}

static int get_string(struct rbuf *b, struct rbuf *s)
{
	uint32_t n;

	if (get_u32(b, &n) < 0 || n > b->len)
		return -EBADMSG;
	s->p = b->p, s->len = n;
	b->p += n, b->len -= n;
	return 0;
}

static bool rbuf_eq(const struct rbuf *s, const char *str)
{
	return s->len == strlen(str) && memcmp(s->p, str, s->len) == 0;
}

struct wbuf {
	unsigned char *p;
	size_t len, cap;
};

static void put_raw(struct wbuf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_u32(struct wbuf *b, uint32_t v)
{
	unsigned char x[4] = { v >> 24, v >> 16, v >> 8, v };
	put_raw(b, x, 4);
}

static void put_string(struct wbuf *b, const void *data, size_t n)
{
	put_u32(b, (uint32_t)n);
	put_raw(b, data, n);
}

static void put_cstring(struct wbuf *b, const char *s) { put_string(b, s, strlen(s)); }

/* Wipe and free: the buffers may hold key material or a signed preimage. */
static void wbuf_wipe(struct wbuf *b)
{
	if (b->p)
		explicit_bzero(b->p, b->cap);
	free(b->p);
	*b = (struct wbuf){ 0 };
}

/* string "ssh-ed25519" + string pk: the public key blob. */
static void put_pubkey_blob(struct wbuf *b, const unsigned char pk[ED25519_PK_LEN])
{
	struct wbuf k = { 0 };

	put_cstring(&k, KEY_TYPE);
	put_string(&k, pk, ED25519_PK_LEN);
	put_string(b, k.p, k.len);
	wbuf_wipe(&k);
}

/* Why a key of another type cannot sign here, by its type name: SSHSIG over Ed25519 is the one
 * signature this module makes (docs/swaptool-report.1, KEYS). */
static const char *other_key_why(const struct rbuf *type)
{
	static const struct { const char *prefix, *why; } types[] = {
		{ "ssh-rsa", "an RSA key (ssh-rsa): swaptool signs with Ed25519 keys only" },
		{ "ecdsa-sha2-", "an ECDSA key (ecdsa-sha2-*): swaptool signs with Ed25519 keys only" },
		{ "sk-", "a FIDO security-key key (sk-*): its private half stays on the token, which swaptool "
			 "cannot use; sign with a plain Ed25519 key" },
		{ "ssh-dss", "a DSA key (ssh-dss): swaptool signs with Ed25519 keys only" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (type->len >= strlen(types[i].prefix) && memcmp(type->p, types[i].prefix, strlen(types[i].prefix)) == 0)
			return types[i].why;
	return "not an ssh-ed25519 key: swaptool signs with Ed25519 keys only";
}

static int parse_pubkey_blob(struct rbuf blob, unsigned char pk[ED25519_PK_LEN], const char **why)
{
	struct rbuf type, key;

	if (get_string(&blob, &type) < 0 || get_string(&blob, &key) < 0) {
		*why = "truncated public key blob";
		return -EBADMSG;
	}
	if (!rbuf_eq(&type, KEY_TYPE)) {
		*why = other_key_why(&type);
		return -ENOTSUP;
	}
	if (key.len != ED25519_PK_LEN || blob.len) {
		*why = "malformed ssh-ed25519 public key blob";
		return -EBADMSG;
	}
	memcpy(pk, key.p, ED25519_PK_LEN);
	return 0;
}

/* ---- keys ---- */

void sshkey_free(struct ssh_key *k)
{
	if (!k)
		return;
	explicit_bzero(k->seed, sizeof(k->seed));
	free(k->comment);
	free(k->path);
	free(k);
}

static int ed25519_derive_pk(const unsigned char seed[ED25519_SEED_LEN], unsigned char pk[ED25519_PK_LEN])
{
	EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_SEED_LEN);
	size_t n = ED25519_PK_LEN;
	int r = 0;

	if (!key)
		return -EIO;
	if (!EVP_PKEY_get_raw_public_key(key, pk, &n) || n != ED25519_PK_LEN)
		r = -EIO;
	EVP_PKEY_free(key);
	return r;
}

/* Between the BEGIN and END lines, only base64 and whitespace; after END, only whitespace.
 * no_begin is the reason given when the text does not start with the BEGIN line. */
static int dearmour(const char *text, size_t len, const char *begin, const char *end, const char *no_begin,
		    unsigned char **out, size_t *outlen, const char **why)
{
	const char *p = text, *stop = text + len, *b, *e;

	while (p < stop && isspace((unsigned char)*p))
		p++;
	if ((size_t)(stop - p) < strlen(begin) || memcmp(p, begin, strlen(begin)) != 0) {
		*why = no_begin;
		return -EBADMSG;
	}
	b = p + strlen(begin);
	e = memmem(b, (size_t)(stop - b), end, strlen(end));
	if (!e) {
		*why = "no armour footer (truncated?)";
		return -EBADMSG;
	}
	for (const char *t = e + strlen(end); t < stop; t++)
		if (!isspace((unsigned char)*t)) {
			*why = "trailing data after the armour footer";
			return -EBADMSG;
		}
	if (b64_decode(b, (size_t)(e - b), out, outlen) < 0) {
		*why = "bad base64 inside the armour";
		return -EBADMSG;
	}
	return 0;
}

int sshkey_parse_private(const char *text, size_t len, struct ssh_key **out, const char **why)
{
	_cleanup_free_ unsigned char *raw = NULL;
	size_t rawlen = 0;
	struct rbuf b, cipher, kdf, kdfopts, pub, priv, type, pk, sk, comment;
	uint32_t nkeys, check1, check2;
	struct ssh_key *k = NULL;
	unsigned char derived[ED25519_PK_LEN];
	int r;

	r = dearmour(text, len, KEY_BEGIN, KEY_END, "not an OpenSSH private key (no '" KEY_BEGIN "' line)", &raw,
		     &rawlen, why);
	if (r < 0)
		return r;
	b = (struct rbuf){ raw, rawlen };
	r = -EBADMSG;
	if (b.len < sizeof(KEY_MAGIC) || memcmp(b.p, KEY_MAGIC, sizeof(KEY_MAGIC)) != 0) {
		*why = "wrong magic: not an openssh-key-v1 key";
		goto out;
	}
	b.p += sizeof(KEY_MAGIC), b.len -= sizeof(KEY_MAGIC);
	if (get_string(&b, &cipher) < 0 || get_string(&b, &kdf) < 0 || get_string(&b, &kdfopts) < 0 ||
	    get_u32(&b, &nkeys) < 0) {
		*why = "truncated key header";
		goto out;
	}
	if (nkeys != 1) {
		*why = "the file must hold exactly one key";
		goto out;
	}
	if (get_string(&b, &pub) < 0 || get_string(&b, &priv) < 0) {
		*why = "truncated key";
		goto out;
	}
	if (b.len) {
		*why = "trailing data after the private section";
		goto out;
	}
	k = xcalloc(1, sizeof(*k));
	r = parse_pubkey_blob(pub, k->pk, why);
	if (r < 0)
		goto out;
	r = -EBADMSG;
	if (!rbuf_eq(&cipher, "none")) {
		/* The private half is sealed (aes256-ctr + bcrypt): we do not take passphrases, the agent does. */
		k->encrypted = true;
		*out = k;
		return 0;
	}
	if (!rbuf_eq(&kdf, "none") || kdfopts.len) {
		*why = "cipher 'none' with a kdf: malformed key";
		goto out;
	}
	/* The private section is padded to the cipher block size, 8 for "none". */
	if (priv.len % 8) {
		*why = "private section is not a multiple of 8 bytes";
		goto out;
	}
	if (get_u32(&priv, &check1) < 0 || get_u32(&priv, &check2) < 0) {
		*why = "truncated private section";
		goto out;
	}
	if (check1 != check2) {
		*why = "checkints differ: corrupt key (or a wrong passphrase)";
		goto out;
	}
	if (get_string(&priv, &type) < 0 || get_string(&priv, &pk) < 0 || get_string(&priv, &sk) < 0 ||
	    get_string(&priv, &comment) < 0) {
		*why = "truncated private section";
		goto out;
	}
	if (!rbuf_eq(&type, KEY_TYPE)) {
		*why = "private key is not ssh-ed25519";
		r = -ENOTSUP;
		goto out;
	}
	/* sk is seed (32) || pk (32), as ref10 stores it. */
	if (pk.len != ED25519_PK_LEN || sk.len != 64) {
		*why = "wrong ssh-ed25519 key lengths";
		goto out;
	}
	for (size_t i = 0; i < priv.len; i++)
		if (priv.p[i] != (unsigned char)(i + 1) || i >= 7) {
			*why = "bad padding after the private key (expected 1,2,3...)";
			goto out;
		}
	if (memcmp(pk.p, k->pk, ED25519_PK_LEN) != 0 || memcmp(sk.p + 32, k->pk, ED25519_PK_LEN) != 0) {
		*why = "public and private halves of the key differ";
		goto out;
	}
	memcpy(k->seed, sk.p, ED25519_SEED_LEN);
	if (ed25519_derive_pk(k->seed, derived) < 0 || memcmp(derived, k->pk, ED25519_PK_LEN) != 0) {
		*why = "the private seed does not derive the public key";
		goto out;
	}
	k->has_private = true;
	k->comment = xasprintf("%.*s", (int)comment.len, (const char *)comment.p);
	*out = TAKE_PTR(k);
	r = 0;
out:
	if (raw)
		explicit_bzero(raw, rawlen);
	sshkey_free(k);
	return r;
}

int sshkey_parse_public(const char *line, unsigned char pk[ED25519_PK_LEN], const char **why)
{
	const char *p = line, *b;
	_cleanup_free_ unsigned char *blob = NULL;
	size_t n = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (!startswith(p, KEY_TYPE " ")) {
		*why = "not an ssh-ed25519 public key line";
		return -ENOTSUP;
	}
	p += strlen(KEY_TYPE) + 1;
	while (*p == ' ')
		p++;
	b = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (b64_decode(b, (size_t)(p - b), &blob, &n) < 0) {
		*why = "bad base64 in the public key";
		return -EBADMSG;
	}
	/* The base64 is the blob itself: string "ssh-ed25519" || string pk. */
	return parse_pubkey_blob((struct rbuf){ blob, n }, pk, why);
}

/* The key file through one descriptor: a regular file (a FIFO would block, a device never end) of
 * at most 1 MiB, and its mode as fstat says it for that same file. */
static int read_key_file(const char *path, char **text, size_t *len, mode_t *mode)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t have = 0, cap = 1 << 20;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (st.st_size > (off_t)cap)
		return -EFBIG;
	buf = xcalloc(1, cap + 1);
	for (;;) {
		ssize_t n = read(fd, buf + have, cap - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			explicit_bzero(buf, have);
			return r;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have == cap) {
			explicit_bzero(buf, have);
			return -EFBIG;
		}
	}
	*mode = st.st_mode;
	*len = have;
	*text = TAKE_PTR(buf);
	return 0;
}

int sshkey_load_private(const char *path, struct ssh_key **out, const char **why)
{
	_cleanup_free_ char *text = NULL, *pubpath = NULL, *pubtext = NULL;
	static char perm_why[160];
	struct ssh_key *k = NULL;
	size_t len = 0;
	mode_t mode = 0;
	int r;

	r = read_key_file(path, &text, &len, &mode);
	if (r < 0) {
		*why = r == -EINVAL ? "not a regular file" : "cannot read the key file";
		return r;
	}
	r = sshkey_parse_private(text, len, &k, why);
	explicit_bzero(text, len);
	if (r < 0)
		return r;
	/* ssh-keygen's rule: a private key that group or others may access is not used at all (its
	 * secret may be known to others, so what it signs proves nothing). */
	if (mode & 077) {
		snprintf(perm_why, sizeof(perm_why),
			 "UNPROTECTED PRIVATE KEY FILE: permissions %04o are too open (group or others may access it); "
			 "run 'chmod 600' on it", (unsigned)(mode & 07777));
		*why = perm_why;
		sshkey_free(k);
		return -EPERM;
	}
	k->path = xstrdup(path);
	if (k->encrypted) {
		/* The agent is asked with the public key of FILE.pub, as ssh-keygen -Y sign does. */
		unsigned char pk[ED25519_PK_LEN];

		pubpath = xasprintf("%s.pub", path);
		if (read_file_all(pubpath, 65536, &pubtext, NULL) < 0) {
			*why = "the key is encrypted and its .pub file is unreadable";
			sshkey_free(k);
			return -ENOENT;
		}
		r = sshkey_parse_public(pubtext, pk, why);
		if (r < 0 || memcmp(pk, k->pk, ED25519_PK_LEN) != 0) {
			if (r >= 0)
				*why = "the .pub file does not match the private key";
			sshkey_free(k);
			return r < 0 ? r : -EBADMSG;
		}
	}
	*out = k;
	return 0;
}

char *sshkey_fingerprint(const unsigned char pk[ED25519_PK_LEN])
{
	struct wbuf w = { 0 };
	unsigned char md[32];
	unsigned mdlen = 0;
	_cleanup_free_ char *b64 = NULL;
	size_t n;

	put_cstring(&w, KEY_TYPE);
	put_string(&w, pk, ED25519_PK_LEN);
	EVP_Digest(w.p, w.len, md, &mdlen, EVP_sha256(), NULL);
	wbuf_wipe(&w);
	b64 = b64_encode(md, mdlen);
	n = strlen(b64);
	while (n && b64[n - 1] == '=') /* ssh-keygen prints it unpadded */
		b64[--n] = '\0';
	return xasprintf("SHA256:%s", b64);
}

char *sshkey_public_line(const unsigned char pk[ED25519_PK_LEN])
{
	struct wbuf w = { 0 };
	_cleanup_free_ char *b64 = NULL;

	put_cstring(&w, KEY_TYPE);
	put_string(&w, pk, ED25519_PK_LEN);
	b64 = b64_encode(w.p, w.len);
	wbuf_wipe(&w);
	return xasprintf("%s %s", KEY_TYPE, b64);
}

/* ---- digests ---- */

static const EVP_MD *hash_md(const char *alg)
{
	if (streq(alg, "sha512"))
		return EVP_sha512();
	if (streq(alg, "sha256"))
		return EVP_sha256();
	return NULL;
}

int sshsig_hash_fd(int fd, const char *hashalg, unsigned char *md, unsigned *mdlen)
{
	const EVP_MD *type = hash_md(hashalg);
	EVP_MD_CTX *c;
	unsigned char buf[65536];
	int r = 0;

	if (!type)
		return -ENOTSUP;
	c = EVP_MD_CTX_new();
	if (!c)
		return -ENOMEM;
	if (!EVP_DigestInit_ex(c, type, NULL)) {
		r = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (!EVP_DigestUpdate(c, buf, (size_t)n)) {
			r = -EIO;
			goto out;
		}
	}
	if (!EVP_DigestFinal_ex(c, md, mdlen))
		r = -EIO;
out:
	EVP_MD_CTX_free(c);
	return r;
}

int sshsig_hash_buf(const void *buf, size_t len, const char *hashalg, unsigned char *md, unsigned *mdlen)
{
	const EVP_MD *type = hash_md(hashalg);
	EVP_MD_CTX *c;
	int r = 0;

	if (!type)
		return -ENOTSUP;
	c = EVP_MD_CTX_new();
	if (!c)
		return -ENOMEM;
	if (!EVP_DigestInit_ex(c, type, NULL) || !EVP_DigestUpdate(c, buf, len) || !EVP_DigestFinal_ex(c, md, mdlen))
		r = -EIO;
	EVP_MD_CTX_free(c);
	return r;
}

/* ---- signing ---- */

/* The preimage Ed25519 signs: MAGIC || string ns || string reserved || string hashalg || string H(m). */
static void signed_data(struct wbuf *w, const char *ns, const char *hashalg, const unsigned char *md, unsigned mdlen)
{
	put_raw(w, SIG_MAGIC, strlen(SIG_MAGIC));
	put_cstring(w, ns);
	put_string(w, "", 0);
	put_cstring(w, hashalg);
	put_string(w, md, mdlen);
}

static int sign_local(const struct ssh_key *k, const struct wbuf *tbs, unsigned char sig[ED25519_SIG_LEN])
{
	EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, ED25519_SEED_LEN);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t siglen = ED25519_SIG_LEN;
	int r = 0;

	/* Ed25519 is one-shot (RFC 8032 PureEdDSA): no digest type, the whole preimage at once. */
	if (!key || !c || !EVP_DigestSignInit(c, NULL, NULL, NULL, key) ||
	    !EVP_DigestSign(c, sig, &siglen, tbs->p, tbs->len) || siglen != ED25519_SIG_LEN)
		r = -EIO;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(key);
	return r;
}

/* SSH2_AGENTC_SIGN_REQUEST: string key blob, string data, uint32 flags; the reply is
 * SSH2_AGENT_SIGN_RESPONSE with string signature (string "ssh-ed25519" || string sig). */
static int sign_agent(const struct ssh_key *k, const struct wbuf *tbs, unsigned char sig[ED25519_SIG_LEN],
		      const char **why)
{
	const char *sock = getenv("SSH_AUTH_SOCK");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	struct wbuf msg = { 0 }, body = { 0 };
	unsigned char hdr[4];
	_cleanup_free_ unsigned char *reply = NULL;
	uint32_t rlen;
	struct rbuf rb, sigblob, type, raw;
	unsigned char code = AGENTC_SIGN_REQUEST;
	int r;

	if (!sock || !*sock) {
		*why = "the key is encrypted and no ssh-agent is reachable (SSH_AUTH_SOCK is not set)";
		return -ENOKEY;
	}
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		*why = "SSH_AUTH_SOCK is too long for a unix socket path";
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		*why = "cannot connect to the ssh-agent at SSH_AUTH_SOCK";
		return -ECONNREFUSED;
	}
	put_raw(&body, &code, 1);
	put_pubkey_blob(&body, k->pk);
	put_string(&body, tbs->p, tbs->len);
	put_u32(&body, 0);
	put_string(&msg, body.p, body.len);
	r = write_all(fd, msg.p, msg.len);
	wbuf_wipe(&msg);
	wbuf_wipe(&body);
	if (r < 0 || read_all(fd, hdr, 4) < 0) {
		*why = "the ssh-agent closed the connection";
		return -EIO;
	}
	rlen = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (rlen < 1 || rlen > AGENT_MAX_REPLY) {
		*why = "the ssh-agent sent a malformed reply";
		return -EIO;
	}
	reply = xcalloc(rlen, 1);
	if (read_all(fd, reply, rlen) < 0) {
		*why = "the ssh-agent closed the connection";
		return -EIO;
	}
	if (reply[0] != AGENT_SIGN_RESPONSE) {
		*why = "the ssh-agent refused to sign: it does not hold this key (run ssh-add with the key file)";
		return -ENOKEY;
	}
	rb = (struct rbuf){ reply + 1, rlen - 1 };
	if (get_string(&rb, &sigblob) < 0 || rb.len || get_string(&sigblob, &type) < 0 ||
	    get_string(&sigblob, &raw) < 0 || sigblob.len || !rbuf_eq(&type, KEY_TYPE) ||
	    raw.len != ED25519_SIG_LEN) {
		*why = "the ssh-agent sent a malformed signature";
		return -EIO;
	}
	memcpy(sig, raw.p, ED25519_SIG_LEN);
	return 0;
}

int sshsig_sign(const struct ssh_key *k, const char *ns, const char *hashalg, const unsigned char *md,
		unsigned mdlen, char **armour, const char **why)
{
	struct wbuf tbs = { 0 }, blob = { 0 }, sigw = { 0 };
	unsigned char sig[ED25519_SIG_LEN];
	_cleanup_free_ char *b64 = NULL;
	FILE *f;
	char *text = NULL;
	size_t textlen = 0, n;
	int r;

	if (!hash_md(hashalg)) {
		*why = "unsupported hash (sha256 or sha512)";
		return -ENOTSUP;
	}
	signed_data(&tbs, ns, hashalg, md, mdlen);
	if (k->has_private) {
		r = sign_local(k, &tbs, sig);
		if (r < 0)
			*why = "Ed25519 signing failed in libcrypto";
	} else if (k->encrypted)
		r = sign_agent(k, &tbs, sig, why);
	else {
		*why = "no private key to sign with";
		r = -ENOKEY;
	}
	wbuf_wipe(&tbs);
	if (r < 0)
		return r;

	/* MAGIC || uint32 1 || string pubkey || string ns || string reserved || string hashalg || string sig */
	put_raw(&blob, SIG_MAGIC, strlen(SIG_MAGIC));
	put_u32(&blob, 1);
	put_pubkey_blob(&blob, k->pk);
	put_cstring(&blob, ns);
	put_string(&blob, "", 0);
	put_cstring(&blob, hashalg);
	put_cstring(&sigw, KEY_TYPE);
	put_string(&sigw, sig, ED25519_SIG_LEN);
	put_string(&blob, sigw.p, sigw.len);
	wbuf_wipe(&sigw);
	b64 = b64_encode(blob.p, blob.len);
	wbuf_wipe(&blob);

	f = open_memstream(&text, &textlen);
	if (!f)
		return -ENOMEM;
	fputs(SIG_BEGIN "\n", f);
	n = strlen(b64);
	for (size_t i = 0; i < n; i += SIG_WRAP)
		fprintf(f, "%.*s\n", (int)(n - i < SIG_WRAP ? n - i : SIG_WRAP), b64 + i);
	fputs(SIG_END "\n", f);
	fclose(f);
	*armour = text;
	return 0;
}

/* ---- verification ---- */

int sshsig_parse(const char *armour, size_t len, struct sshsig *out, const char **why)
{
	_cleanup_free_ unsigned char *raw = NULL;
	size_t rawlen = 0;
	struct rbuf b, pub, ns, reserved, alg, sigblob, type, sig;
	uint32_t version;
	int r;

	r = dearmour(armour, len, SIG_BEGIN, SIG_END, "not an SSH signature (no '" SIG_BEGIN "' line)", &raw,
		     &rawlen, why);
	if (r < 0)
		return r;
	b = (struct rbuf){ raw, rawlen };
	if (b.len < strlen(SIG_MAGIC) || memcmp(b.p, SIG_MAGIC, strlen(SIG_MAGIC)) != 0) {
		*why = "wrong magic: not an SSHSIG signature";
		return -EBADMSG;
	}
	b.p += strlen(SIG_MAGIC), b.len -= strlen(SIG_MAGIC);
	if (get_u32(&b, &version) < 0) {
		*why = "truncated signature";
		return -EBADMSG;
	}
	if (version != 1) {
		*why = "unsupported SSHSIG version (expected 1)";
		return -EBADMSG;
	}
	if (get_string(&b, &pub) < 0 || get_string(&b, &ns) < 0 || get_string(&b, &reserved) < 0 ||
	    get_string(&b, &alg) < 0 || get_string(&b, &sigblob) < 0) {
		*why = "truncated signature";
		return -EBADMSG;
	}
	if (b.len) {
		*why = "trailing data after the signature";
		return -EBADMSG;
	}
	r = parse_pubkey_blob(pub, out->pk, why);
	if (r < 0)
		return r;
	if (ns.len == 0 || ns.len >= sizeof(out->ns) || memchr(ns.p, '\0', ns.len)) {
		*why = "bad namespace in the signature";
		return -EBADMSG;
	}
	if (!rbuf_eq(&alg, "sha512") && !rbuf_eq(&alg, "sha256")) {
		*why = "unsupported hash in the signature (sha256 or sha512)";
		return -EBADMSG;
	}
	if (get_string(&sigblob, &type) < 0 || get_string(&sigblob, &sig) < 0 || sigblob.len ||
	    !rbuf_eq(&type, KEY_TYPE)) {
		*why = "malformed ssh-ed25519 signature blob";
		return -EBADMSG;
	}
	if (sig.len != ED25519_SIG_LEN) {
		*why = "the Ed25519 signature is not 64 bytes";
		return -EBADMSG;
	}
	memcpy(out->ns, ns.p, ns.len);
	out->ns[ns.len] = '\0';
	memcpy(out->hashalg, alg.p, alg.len);
	out->hashalg[alg.len] = '\0';
	memcpy(out->sig, sig.p, ED25519_SIG_LEN);
	return 0;
}

int sshsig_verify(const struct sshsig *s, const char *ns, const unsigned char *md, unsigned mdlen,
		  const char **why)
{
	struct wbuf tbs = { 0 };
	EVP_PKEY *key;
	EVP_MD_CTX *c;
	int ok;

	if (!streq(s->ns, ns)) {
		*why = "the signature is for another namespace";
		return -EBADMSG;
	}
	key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, s->pk, ED25519_PK_LEN);
	c = EVP_MD_CTX_new();
	signed_data(&tbs, s->ns, s->hashalg, md, mdlen);
	ok = key && c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, key) == 1 &&
	     EVP_DigestVerify(c, s->sig, ED25519_SIG_LEN, tbs.p, tbs.len) == 1;
	wbuf_wipe(&tbs);
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(key);
	if (!ok) {
		*why = "bad signature: the file or the signature was changed";
		return -EKEYREJECTED;
	}
	return 0;
}

/* ---- allowed_signers ---- */

/* OpenSSH pattern lists: comma-separated, '*' and '?' wildcards, '!' negates (a negated match wins). */
static bool match_pattern_list(const char *s, const char *list)
{
	_cleanup_free_ char *copy = xstrdup(list);
	bool matched = false;
	char *save = NULL;

	for (char *pat = strtok_r(copy, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
		bool neg = *pat == '!';

		if (neg)
			pat++;
		if (fnmatch(pat, s, FNM_NOESCAPE) == 0) {
			if (neg)
				return false;
			matched = true;
		}
	}
	return matched;
}

/* Next whitespace-separated field; a leading '"' quotes up to the closing '"'.
 * Inside an options field, quoted values (namespaces="a,b") may hold spaces. */
static char *next_field(char **p)
{
	char *s = *p, *start;
	bool quoted = false;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	start = s;
	for (; *s; s++) {
		if (*s == '"')
			quoted = !quoted;
		else if (!quoted && (*s == ' ' || *s == '\t'))
			break;
	}
	if (*s)
		*s++ = '\0';
	*p = s;
	return start;
}

static char *unquote(char *s)
{
	size_t n = strlen(s);

	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		s[n - 1] = '\0';
		return s + 1;
	}
	return s;
}

/* "YYYYMMDD[HHMM[SS]][Z]" as ssh-keygen takes it; local time unless Z. */
static int parse_sig_time(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	size_t n = strlen(s);
	bool utc = n && (s[n - 1] == 'Z' || s[n - 1] == 'z');
	char buf[16];

	if (utc)
		n--;
	if ((n != 8 && n != 12 && n != 14) || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)buf[i]))
			return -EINVAL;
	if (sscanf(buf, "%4d%2d%2d%2d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec) < 3)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	*out = utc ? timegm(&tm) : mktime(&tm);
	return 0;
}

struct signer_opts {
	bool cert_authority;
	char *namespaces; /* NULL: any */
	bool has_after, has_before;
	time_t after, before;
};

static int parse_options(char *opts, struct signer_opts *o)
{
	char *p = opts;

	while (*p) {
		char *start = p;
		bool quoted = false;

		for (; *p; p++) {
			if (*p == '"')
				quoted = !quoted;
			else if (*p == ',' && !quoted)
				break;
		}
		if (*p)
			*p++ = '\0';
		if (strcasecmp(start, "cert-authority") == 0)
			o->cert_authority = true;
		else if (strncasecmp(start, "namespaces=", 11) == 0)
			o->namespaces = unquote(start + 11);
		else if (strncasecmp(start, "valid-after=", 12) == 0) {
			if (parse_sig_time(unquote(start + 12), &o->after) < 0)
				return -EINVAL;
			o->has_after = true;
		} else if (strncasecmp(start, "valid-before=", 13) == 0) {
			if (parse_sig_time(unquote(start + 13), &o->before) < 0)
				return -EINVAL;
			o->has_before = true;
		} else
			return -EINVAL;
	}
	return 0;
}

int allowed_signers_check(const char *path, const char *identity, const char *ns,
			  const unsigned char pk[ED25519_PK_LEN], const char **why)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool key_seen = false, principal_seen = false, ns_refused = false, expired = false;
	time_t now = time(NULL);

	if (!f) {
		*why = "cannot read the allowed signers file";
		return -errno;
	}
	while (getline(&line, &cap, f) >= 0) {
		char *p = line, *principals, *field, *keyb64;
		struct signer_opts o = { 0 };
		unsigned char lpk[ED25519_PK_LEN];
		const char *ignored;

		p[strcspn(p, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		principals = next_field(&p);
		field = next_field(&p);
		if (!principals || !field)
			continue;
		/* The field after the principals is the key type unless it is an options list. */
		if (!startswith(field, "ssh-") && !startswith(field, "ecdsa-") && !startswith(field, "sk-")) {
			if (parse_options(field, &o) < 0)
				continue; /* ssh-keygen skips a line with bad options */
			field = next_field(&p);
			if (!field)
				continue;
		}
		keyb64 = next_field(&p);
		if (!keyb64 || !streq(field, KEY_TYPE))
			continue;
		_cleanup_free_ char *publine = xasprintf("%s %s", field, keyb64);
		if (sshkey_parse_public(publine, lpk, &ignored) < 0 || memcmp(lpk, pk, ED25519_PK_LEN) != 0)
			continue;
		if (o.cert_authority)
			continue; /* a CA line vouches for certificates, not for this plain key */
		key_seen = true;
		if (!match_pattern_list(identity, unquote(principals)))
			continue;
		principal_seen = true;
		if (o.namespaces && !match_pattern_list(ns, o.namespaces)) {
			ns_refused = true;
			continue;
		}
		if ((o.has_after && now < o.after) || (o.has_before && now > o.before)) {
			expired = true;
			continue;
		}
		return 0;
	}
	if (ns_refused)
		*why = "the key is allowed for this identity but not for this namespace (namespaces=)";
	else if (expired)
		*why = "the key is allowed for this identity but outside its valid-after/valid-before window";
	else if (principal_seen || key_seen)
		*why = "the key is in the allowed signers file but not for this identity";
	else
		*why = "the signing key is not in the allowed signers file";
	return -EPERM;
}
