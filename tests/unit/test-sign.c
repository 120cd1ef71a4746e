/* SPDX-License-Identifier: MIT */
/* sign: OpenSSH key parsing (good and malformed), SSHSIG known answers from ssh-keygen, armour, allowed_signers. */
#include "tap.h"
#include "util.h"
#include "sign.h"

/* Made with `ssh-keygen -t ed25519 -N '' -C test@swaptool`; the signatures below are
 * `ssh-keygen -Y sign -n swaptool-report -f k m` (and -O hashalg=sha256) of MSG. */
static const char KEY[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	"QyNTUxOQAAACB3mzyONiyKn3iO31iVTUWPMoCV7gTOJJ3gVSaTQOQ4HAAAAJBUK8bZVCvG\n"
	"2QAAAAtzc2gtZWQyNTUxOQAAACB3mzyONiyKn3iO31iVTUWPMoCV7gTOJJ3gVSaTQOQ4HA\n"
	"AAAEBJ4al0E5lAFsJIJwBqNcdDnvZ9M9swScC/flzymfgP53ebPI42LIqfeI7fWJVNRY8y\n"
	"gJXuBM4kneBVJpNA5DgcAAAADXRlc3RAc3dhcHRvb2w=\n"
	"-----END OPENSSH PRIVATE KEY-----\n";
static const char PUB[] =
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHebPI42LIqfeI7fWJVNRY8ygJXuBM4kneBVJpNA5Dgc test@swaptool\n";
static const char MSG[] = "hello swaptool\n";
static const char SIG512[] =
	"-----BEGIN SSH SIGNATURE-----\n"
	"U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgd5s8jjYsip94jt9YlU1FjzKAle\n"
	"4EziSd4FUmk0DkOBwAAAAPc3dhcHRvb2wtcmVwb3J0AAAAAAAAAAZzaGE1MTIAAABTAAAA\n"
	"C3NzaC1lZDI1NTE5AAAAQBihgG3z1HvSnLtn2hOOimj5ERTsRFKzdJSBu3nIqZGnwGbyRD\n"
	"45kSWbXmz5CvYNuqYRCaTCYbb2JmiMHudxfwg=\n"
	"-----END SSH SIGNATURE-----\n";
static const char SIG256[] =
	"-----BEGIN SSH SIGNATURE-----\n"
	"U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgd5s8jjYsip94jt9YlU1FjzKAle\n"
	"4EziSd4FUmk0DkOBwAAAAPc3dhcHRvb2wtcmVwb3J0AAAAAAAAAAZzaGEyNTYAAABTAAAA\n"
	"C3NzaC1lZDI1NTE5AAAAQN0Cg/DPra0IKxcNEXDTVc2bpS0+46kWPLF8r9P6r4jTEMpTCp\n"
	"7uP+pY4UjIQIijaiQyMaOdSOn/4V4OYtR3NQY=\n"
	"-----END SSH SIGNATURE-----\n";
/* `ssh-keygen -t ed25519 -N secret`: aes256-ctr + bcrypt. */
static const char ENCKEY[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABBU9GauNf\n"
	"rwVlmvt0ryXGbEAAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIFc5El5lkGEjABpW\n"
	"MQ5jHH50RgzzLglOJfsIzBFj1QoMAAAAkLfLkSXXTCtlTJjIP3DPbH9Ztl/3hj8eV5iUhK\n"
	"Dop6OKwA2BkJ6cnp/Df5kAL0Jw/RsUl15mRcEb7tdBMG6ELFxxdqd8uiGWJy3cz6BRu6WQ\n"
	"kVnVAKvC/alLSHcwFyWw71tHNXcw85DZRkuT6mWGBAbCLv7308RLv2xfeBZWKKHqO0Ke0B\n"
	"hRAJB8QBL65LARAQ==\n"
	"-----END OPENSSH PRIVATE KEY-----\n";

/* Offsets in the decoded KEY: magic 15, "none" 8, "none" 8, "" 4, nkeys 4, pub 4+51, priv len 4 => 98. */
#define PRIV_OFF 98

static unsigned char *decoded_key(size_t *n)
{
	unsigned char *raw = NULL;
	const char *b = strchr(KEY, '\n') + 1, *e = strstr(KEY, "-----END");

	if (b64_decode(b, (size_t)(e - b), &raw, n) < 0)
		abort();
	return raw;
}

static char *armour_key(const unsigned char *raw, size_t n)
{
	_cleanup_free_ char *b64 = b64_encode(raw, n);
	return xasprintf("-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n", b64);
}

/* Parse a variant of KEY and return the reason it was refused (NULL when accepted). */
static const char *refusal(const unsigned char *raw, size_t n)
{
	_cleanup_free_ char *text = armour_key(raw, n);
	struct ssh_key *k = NULL;
	const char *why = NULL;
	int r = sshkey_parse_private(text, strlen(text), &k, &why);

	sshkey_free(k);
	return r < 0 ? why : NULL;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

static void test_key(void)
{
	struct ssh_key *k = NULL;
	const char *why = NULL;
	unsigned char pk[ED25519_PK_LEN];
	size_t n;
	_cleanup_free_ unsigned char *raw = decoded_key(&n);
	_cleanup_free_ unsigned char *v = xcalloc(n + 16, 1);
	_cleanup_free_ char *fp = NULL, *line = NULL;

	CHECK(sshkey_parse_private(KEY, strlen(KEY), &k, &why) == 0);
	CHECK(k && k->has_private && !k->encrypted);
	CHECK_STR(k ? k->comment : NULL, "test@swaptool");
	CHECK(sshkey_parse_public(PUB, pk, &why) == 0);
	CHECK(k && memcmp(pk, k->pk, 32) == 0);
	/* `ssh-keygen -lf k.pub` */
	fp = sshkey_fingerprint(pk);
	CHECK(startswith(fp, "SHA256:") && strlen(fp) == 7 + 43);
	line = sshkey_public_line(pk);
	CHECK(strncmp(line, PUB, strlen(line)) == 0);
	sshkey_free(k);
	k = NULL;

	CHECK(sshkey_parse_private(ENCKEY, strlen(ENCKEY), &k, &why) == 0);
	CHECK(k && k->encrypted && !k->has_private);
	sshkey_free(k);
	k = NULL;

	CHECK(refusal(raw, n) == NULL);
	/* wrong magic */
	memcpy(v, raw, n);
	v[0] = 'x';
	CHECK_STR(refusal(v, n), "wrong magic: not an openssh-key-v1 key");
	/* checkint mismatch */
	memcpy(v, raw, n);
	v[PRIV_OFF + 4] ^= 1;
	CHECK_STR(refusal(v, n), "checkints differ: corrupt key (or a wrong passphrase)");
	/* truncated: the private section's length runs past the end */
	CHECK_STR(refusal(raw, n - 9), "truncated key");
	/* trailing data after the private section */
	memcpy(v, raw, n);
	memcpy(v + n, "junkjunk", 8);
	CHECK_STR(refusal(v, n + 8), "trailing data after the private section");
	/* two keys */
	memcpy(v, raw, n);
	v[38] = 2;
	CHECK_STR(refusal(v, n), "the file must hold exactly one key");
	/* KEY's private section is 144 bytes, a multiple of 8, so it has no padding: shorten the
	 * 13-byte comment to 10 so that its last 3 bytes become padding 1,2,3, then spoil it. */
	memcpy(v, raw, n);
	put_be32(v + PRIV_OFF + 127, 10);
	v[n - 3] = 1, v[n - 2] = 2, v[n - 1] = 3;
	CHECK(refusal(v, n) == NULL);
	v[n - 1] = 9;
	CHECK_STR(refusal(v, n), "bad padding after the private key (expected 1,2,3...)");
	/* public half in the private section differs from the outer one */
	memcpy(v, raw, n);
	v[PRIV_OFF + 8 + 15 + 4 + 5] ^= 1;
	CHECK_STR(refusal(v, n), "public and private halves of the key differ");
	/* the seed does not derive pk */
	memcpy(v, raw, n);
	v[PRIV_OFF + 8 + 15 + 36 + 4 + 3] ^= 1;
	CHECK_STR(refusal(v, n), "the private seed does not derive the public key");
	/* another key type (the outer public key's type at offset 47, 11 bytes): named, not parsed;
	 * a FIDO key (sk-*) cannot sign off its token at all */
	memcpy(v, raw, n);
	memcpy(v + 47, "sk-ed25519x", 11);
	CHECK_STR(refusal(v, n), "a FIDO security-key key (sk-*): its private half stays on the token, which swaptool "
				 "cannot use; sign with a plain Ed25519 key");
	memcpy(v + 47, "ssh-dss\0\0\0\0", 11);
	CHECK(refusal(v, n) != NULL && strstr(refusal(v, n), "Ed25519 keys only"));
	/* cipher none with a kdf */
	memcpy(v, raw, n);
	memcpy(v + 27, "bcry", 4);
	CHECK_STR(refusal(v, n), "cipher 'none' with a kdf: malformed key");
	/* not a key at all, and trailing text after the armour */
	CHECK(sshkey_parse_private("hello\n", 6, &k, &why) == -EBADMSG);
	_cleanup_free_ char *trail = xasprintf("%sextra\n", KEY);
	CHECK(sshkey_parse_private(trail, strlen(trail), &k, &why) == -EBADMSG);
	CHECK_STR(why, "trailing data after the armour footer");
}

static void test_sign(void)
{
	struct ssh_key *k = NULL;
	const char *why = NULL;
	unsigned char md[64];
	unsigned mdlen = 0;
	char *armour = NULL;
	struct sshsig s;

	CHECK(sshkey_parse_private(KEY, strlen(KEY), &k, &why) == 0);
	if (!k)
		return;
	/* byte-identical to ssh-keygen for both hashes (Ed25519 is deterministic) */
	CHECK(sshsig_hash_buf(MSG, strlen(MSG), "sha512", md, &mdlen) == 0 && mdlen == 64);
	CHECK(sshsig_sign(k, SSHSIG_NAMESPACE, "sha512", md, mdlen, &armour, &why) == 0);
	CHECK_STR(armour, SIG512);
	free(armour);
	CHECK(sshsig_hash_buf(MSG, strlen(MSG), "sha256", md, &mdlen) == 0 && mdlen == 32);
	CHECK(sshsig_sign(k, SSHSIG_NAMESPACE, "sha256", md, mdlen, &armour, &why) == 0);
	CHECK_STR(armour, SIG256);
	free(armour);
	sshkey_free(k);

	/* verify ssh-keygen's signatures */
	CHECK(sshsig_parse(SIG512, strlen(SIG512), &s, &why) == 0);
	CHECK_STR(s.hashalg, "sha512");
	CHECK_STR(s.ns, "swaptool-report");
	sshsig_hash_buf(MSG, strlen(MSG), s.hashalg, md, &mdlen);
	CHECK(sshsig_verify(&s, SSHSIG_NAMESPACE, md, mdlen, &why) == 0);
	CHECK(sshsig_verify(&s, "other", md, mdlen, &why) == -EBADMSG);
	/* a flipped message byte, the message without its newline */
	sshsig_hash_buf("hello swaptoal\n", 15, s.hashalg, md, &mdlen);
	CHECK(sshsig_verify(&s, SSHSIG_NAMESPACE, md, mdlen, &why) == -EKEYREJECTED);
	sshsig_hash_buf(MSG, strlen(MSG) - 1, s.hashalg, md, &mdlen);
	CHECK(sshsig_verify(&s, SSHSIG_NAMESPACE, md, mdlen, &why) == -EKEYREJECTED);
	/* a flipped signature byte */
	s.sig[10] ^= 0x40;
	sshsig_hash_buf(MSG, strlen(MSG), s.hashalg, md, &mdlen);
	CHECK(sshsig_verify(&s, SSHSIG_NAMESPACE, md, mdlen, &why) == -EKEYREJECTED);

	CHECK(sshsig_parse(SIG256, strlen(SIG256), &s, &why) == 0);
	CHECK_STR(s.hashalg, "sha256");
	sshsig_hash_buf(MSG, strlen(MSG), s.hashalg, md, &mdlen);
	CHECK(sshsig_verify(&s, SSHSIG_NAMESPACE, md, mdlen, &why) == 0);
}

static void test_armour(void)
{
	struct sshsig s;
	const char *why = NULL;
	size_t n = 0;
	_cleanup_free_ unsigned char *raw = NULL;
	const char *b = strchr(SIG512, '\n') + 1, *e = strstr(SIG512, "-----END");

	/* any width, CRLF */
	CHECK(b64_decode(b, (size_t)(e - b), &raw, &n) == 0);
	_cleanup_free_ char *b64 = b64_encode(raw, n);
	_cleanup_free_ char *wide = xasprintf("-----BEGIN SSH SIGNATURE-----\r\n%.*s\r\n%s\r\n-----END SSH SIGNATURE-----\r\n",
					      40, b64, b64 + 40);
	CHECK(sshsig_parse(wide, strlen(wide), &s, &why) == 0);
	/* trailing data inside the blob */
	_cleanup_free_ unsigned char *longer = xcalloc(n + 1, 1);
	memcpy(longer, raw, n);
	_cleanup_free_ char *b64l = b64_encode(longer, n + 1);
	_cleanup_free_ char *t = xasprintf("-----BEGIN SSH SIGNATURE-----\n%s\n-----END SSH SIGNATURE-----\n", b64l);
	CHECK(sshsig_parse(t, strlen(t), &s, &why) == -EBADMSG);
	CHECK_STR(why, "trailing data after the signature");
	/* version 2 */
	raw[9] = 2;
	_cleanup_free_ char *b64v = b64_encode(raw, n);
	_cleanup_free_ char *v2 = xasprintf("-----BEGIN SSH SIGNATURE-----\n%s\n-----END SSH SIGNATURE-----\n", b64v);
	CHECK(sshsig_parse(v2, strlen(v2), &s, &why) == -EBADMSG);
	CHECK_STR(why, "unsupported SSHSIG version (expected 1)");
	/* truncated armour, junk base64 */
	CHECK(sshsig_parse(SIG512, 60, &s, &why) == -EBADMSG);
	CHECK(sshsig_parse("-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n", 63, &s, &why) ==
	      -EBADMSG);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void test_allowed_signers(void)
{
	char dir[] = "/tmp/test-sign.XXXXXX";
	unsigned char pk[ED25519_PK_LEN];
	const char *why = NULL;
	const char *keyb64 = PUB + strlen("ssh-ed25519 ");
	_cleanup_free_ char *path = NULL, *t = NULL;

	if (!mkdtemp(dir))
		abort();
	path = xasprintf("%s/allowed", dir);
	sshkey_parse_public(PUB, pk, &why);

	t = xasprintf("# comment\n\nop@dgx4,demo@swaptool ssh-ed25519 %.68s\n", keyb64);
	write_text(path, t);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == 0);
	CHECK(allowed_signers_check(path, "mallory@swaptool", "swaptool-report", pk, &why) == -EPERM);
	free(t);
	t = xasprintf("*@swaptool,!bad@swaptool namespaces=\"swaptool-report,git\" ssh-ed25519 %.68s c\n", keyb64);
	write_text(path, t);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == 0);
	CHECK(allowed_signers_check(path, "bad@swaptool", "swaptool-report", pk, &why) == -EPERM);
	free(t);
	t = xasprintf("demo@swaptool namespaces=\"other\" ssh-ed25519 %.68s\n", keyb64);
	write_text(path, t);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == -EPERM);
	CHECK(strstr(why, "namespace") != NULL);
	free(t);
	t = xasprintf("demo@swaptool valid-before=\"20200101\" ssh-ed25519 %.68s\n", keyb64);
	write_text(path, t);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == -EPERM);
	free(t);
	t = xasprintf("demo@swaptool cert-authority ssh-ed25519 %.68s\n", keyb64);
	write_text(path, t);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == -EPERM);
	unlink(path);
	CHECK(allowed_signers_check(path, "demo@swaptool", "swaptool-report", pk, &why) == -ENOENT);
	rmdir(dir);
}

int main(void)
{
	test_key();
	test_sign();
	test_armour();
	test_allowed_signers();
	return tap_done();
}
