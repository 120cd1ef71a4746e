/* SPDX-License-Identifier: MIT */
/* Fuzz target: an allowed_signers file (verify-report --allowed-signers), checked for a fixed key,
 * identity and namespace. */
#include "fuzz.h"

#include "sign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the public key of tests/fuzz/corpus/allowed-signers seeds */
	static const char line[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIObxTx91YX5naB8lHH7BN3aih7b3VM8ThclbySxj4sSJ";
	static unsigned char pk[ED25519_PK_LEN];
	static int have;
	const char *why = NULL;
	char path[64];
	int fd;

	if (!have) {
		if (sshkey_parse_public(line, pk, &why) < 0)
			abort();
		have = 1;
	}
	fd = fuzz_memfd(data, size, path);
	(void)allowed_signers_check(path, "swaptool@node", "swaptool-report", pk, &why);
	close(fd);
	return 0;
}
