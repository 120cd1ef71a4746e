/* SPDX-License-Identifier: MIT */
/* Fuzz target: OpenSSH keys (report --key): the openssh-key-v1 private key file and the
 * "ssh-ed25519 BASE64" public line of a .pub file. The first byte picks which. */
#include "fuzz.h"

#include "sign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		struct ssh_key *k = NULL;
		if (sshkey_parse_private((const char *)data + 1, size - 1, &k, &why) == 0)
			sshkey_free(k);
	} else {
		unsigned char pk[ED25519_PK_LEN];
		char *s = fuzz_str(data + 1, size - 1);
		if (sshkey_parse_public(s, pk, &why) == 0)
			free(sshkey_fingerprint(pk));
		free(s);
	}
	return 0;
}
