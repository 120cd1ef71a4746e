/* SPDX-License-Identifier: MIT */
/* preflight's drive part: identity, health and class of the source (and target) NVMe drives. */
#include "steps.h"

int preflight_drive(struct ctx *ctx, struct record *rec, json_object *src_json, const struct disk *src,
		    const char *from_dumps, const struct disk *target_disk, const char *target_model,
		    uint64_t target_lba_count)
{
	json_object *id = json_object_new_object();
	/* First cut: identity is not read yet, so every source is reported as unknown. */
	_cleanup_free_ char *why = xstrdup("not an NVMe device (identity not read yet)");

	(void)ctx, (void)src, (void)src_json, (void)from_dumps, (void)target_disk, (void)target_model, (void)target_lba_count;
	jset_bool(id, "nvme", false);
	jset_str(id, "reason", why);
	json_object_object_add(rec->root, "source_identity", id);
	record_check(rec, "drive-class", ST_SKIP, "%s", why);
	record_check(rec, "health", ST_SKIP, "%s", why);
	return 0;
}

void preflight_drive_render(const struct ctx *ctx, json_object *record)
{
	json_object *id = jget(record, "source_identity");

	if (id && !jget_bool(id, "nvme"))
		out_line(ctx, "drive: %s", jget_str(id, "reason"));
}
