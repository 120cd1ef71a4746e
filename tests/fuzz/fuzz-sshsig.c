/* SPDX-License-Identifier: MIT */
/* Fuzz target: SSHSIG armour and blob (verify-report --sig), parsed and then verified against a
 * fixed digest, as verify-report does with a report's hash. */
#include "fuzz.h"

#include "sign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshsig sig;
	const char *why = NULL;
	unsigned char md[64];
	unsigned mdlen = 0;

	if (sshsig_parse((const char *)data, size, &sig, &why) != 0)
		return 0;
	if (sshsig_hash_buf("report", 6, sig.hashalg, md, &mdlen) == 0)
		(void)sshsig_verify(&sig, "swaptool-report", md, mdlen, &why);
	free(sshkey_fingerprint(sig.pk));
	free(sshkey_public_line(sig.pk));
	return 0;
}
