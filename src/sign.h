/* SPDX-License-Identifier: MIT */
/* SSHSIG (OpenSSH's PROTOCOL.sshsig) over Ed25519 with OpenSSL libcrypto: OpenSSH key loading,
 * ssh-agent signing, armour, verification and allowed_signers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SSHSIG_NAMESPACE "swaptool-report"
#define ED25519_PK_LEN 32
#define ED25519_SEED_LEN 32
#define ED25519_SIG_LEN 64

/* An Ed25519 key. The seed is wiped by sshkey_free. */
struct ssh_key {
	unsigned char pk[ED25519_PK_LEN];
	unsigned char seed[ED25519_SEED_LEN];
	bool has_private; /* seed is valid */
	bool encrypted;   /* private half sealed by a passphrase: sign through ssh-agent */
	char *comment;
	char *path;
};
void sshkey_free(struct ssh_key *k);
static inline void sshkey_freep(struct ssh_key **k) { sshkey_free(*k); }
#define _cleanup_sshkey_ __attribute__((cleanup(sshkey_freep)))

/*
 * Parse an openssh-key-v1 private key file ("-----BEGIN OPENSSH PRIVATE KEY-----").
 * Unencrypted: magic, cipher and kdf "none", one key, equal checkints, ssh-ed25519, pk and sk
 * halves consistent (and the seed derives pk), padding 1,2,3..., no trailing data.
 * Encrypted: only the public half is read and k->encrypted is set.
 * Returns -EBADMSG (malformed), -ENOTSUP (not ed25519) with *why a static reason.
 */
int sshkey_parse_private(const char *text, size_t len, struct ssh_key **out, const char **why);
/* Load a private key file (a regular file that group and others cannot access: -EPERM otherwise,
 * as ssh-keygen refuses it); for an encrypted one also FILE.pub, which must match. */
int sshkey_load_private(const char *path, struct ssh_key **out, const char **why);
/* Parse "ssh-ed25519 BASE64 [comment]" (an authorized_keys / .pub line). */
int sshkey_parse_public(const char *line, unsigned char pk[ED25519_PK_LEN], const char **why);

/* "SHA256:..." as ssh-keygen -l prints it (caller frees). */
char *sshkey_fingerprint(const unsigned char pk[ED25519_PK_LEN]);
/* "ssh-ed25519 AAAA..." (caller frees). */
char *sshkey_public_line(const unsigned char pk[ED25519_PK_LEN]);

/* Message digest for SSHSIG: "sha512" or "sha256", streamed from a file descriptor or a buffer. */
int sshsig_hash_fd(int fd, const char *hashalg, unsigned char *md, unsigned *mdlen);
int sshsig_hash_buf(const void *buf, size_t len, const char *hashalg, unsigned char *md, unsigned *mdlen);

/*
 * Sign a message digest as an armoured SSHSIG (LF, base64 wrapped at 70 columns), exactly as
 * `ssh-keygen -Y sign -n NS` does. An encrypted key signs through ssh-agent at $SSH_AUTH_SOCK.
 * Returns -ENOKEY (encrypted and no agent), -EIO/-ECONNREFUSED (agent), with *why set.
 */
int sshsig_sign(const struct ssh_key *k, const char *ns, const char *hashalg, const unsigned char *md,
		unsigned mdlen, char **armour, const char **why);

/* A parsed signature. */
struct sshsig {
	unsigned char pk[ED25519_PK_LEN];
	char ns[256];
	char hashalg[16];
	unsigned char sig[ED25519_SIG_LEN];
};
/* Parse armour (any line width, optional CR): magic, version 1, ssh-ed25519 key, hash sha256|sha512,
 * a 64-byte signature, no trailing data. -EBADMSG or -ENOTSUP with *why. */
int sshsig_parse(const char *armour, size_t len, struct sshsig *out, const char **why);
/* Verify against the message digest (computed with s->hashalg) and the expected namespace.
 * -EKEYREJECTED bad signature, -EBADMSG namespace differs. */
int sshsig_verify(const struct sshsig *s, const char *ns, const unsigned char *md, unsigned mdlen,
		  const char **why);

/* Is `pk` allowed to sign namespace `ns` as `identity` per an allowed_signers file (ssh-keygen(1)
 * ALLOWED SIGNERS: principals patterns, namespaces="...", valid-after/valid-before, cert-authority
 * lines are skipped)? 0 yes, -EPERM no, -errno unreadable; *why says which. */
int allowed_signers_check(const char *path, const char *identity, const char *ns,
			  const unsigned char pk[ED25519_PK_LEN], const char **why);

/* Base64 (standard alphabet); decode skips whitespace, rejects junk. Caller frees. */
char *b64_encode(const unsigned char *buf, size_t len);
int b64_decode(const char *s, size_t slen, unsigned char **out, size_t *outlen);
