/* SPDX-License-Identifier: MIT */
/* Fuzz target: the backup manifest (swaptool-manifest/1 JSON inside the tarball). */
#include "fuzz.h"

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest m = { 0 };
	char *why = NULL;

	if (manifest_parse((const char *)data, size, &m, &why) == 0) {
		/* a manifest that parses serialises again, and its paths look up */
		json_object *o = manifest_to_json(&m);
		json_object_put(o);
		for (size_t i = 0; i < m.n; i++)
			(void)manifest_find(&m, m.e[i].path);
	}
	free(why);
	manifest_free(&m);
	return 0;
}
