/* SPDX-License-Identifier: MIT */
#include "freshfit.h"
#include "util.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;

	return u64_add(a, b, &s) < 0 ? UINT64_MAX : s;
}

bool fresh_fit_part(const struct layout *l, size_t i, uint64_t *bytes)
{
	const struct part_fs *f = &l->fs[i];

	*bytes = 0;
	if (l->table.parts[i].container || !f->id.type[0] || streq(f->id.type, "swap"))
		return true;
	if (f->is_ext && f->ext_err == 0) {
		uint64_t blocks = f->ext.free_blocks < f->ext.block_count ? f->ext.block_count - f->ext.free_blocks : 0;

		if (u64_mul(blocks, f->ext.block_size, bytes) < 0)
			*bytes = UINT64_MAX;
		return true;
	}
	if (streq(f->id.type, "vfat")) {
		*bytes = l->table.parts[i].size_bytes;
		return true;
	}
	return false;
}

static uint64_t source_used_bytes(const struct layout *l, size_t *unmeasured)
{
	uint64_t total = 0, part;

	*unmeasured = 0;
	for (size_t i = 0; i < l->table.nparts; i++)
		if (fresh_fit_part(l, i, &part))
			total = sat_add(total, part);
		else
			(*unmeasured)++;
	return total;
}

void fresh_fit(const struct layout *l, uint64_t refetch, uint64_t keep, const uint64_t *stores, size_t n, bool *fits,
	       struct fresh_fit *f)
{
	const struct lba_geometry *tg = &l->tgt_geo;
	uint64_t apart = sat_add(refetch, keep), left;

	*f = (struct fresh_fit){ 0 };
	f->used_bytes = source_used_bytes(l, &f->unmeasured);
	if (tg->last_usable_lba >= tg->first_usable_lba &&
	    u64_mul(tg->last_usable_lba - tg->first_usable_lba + 1, tg->lba_size, &f->room_bytes) < 0)
		f->room_bytes = UINT64_MAX;
	/* the stores and the irreplaceable files live inside the used blocks; measured apart (file
	 * blocks against filesystem blocks) they can come out larger, which leaves no install to count */
	f->install_bytes = f->used_bytes > apart ? f->used_bytes - apart : 0;
	f->need_bytes = sat_add(f->install_bytes, keep);
	f->possible = f->need_bytes != UINT64_MAX && f->need_bytes <= f->room_bytes;
	f->total_bytes = f->need_bytes;
	left = f->possible ? f->room_bytes - f->need_bytes : 0;
	for (size_t i = 0; i < n; i++) {
		fits[i] = f->possible && stores[i] != FRESH_FIT_UNKNOWN && stores[i] <= left;
		if (fits[i]) {
			left -= stores[i];
			f->total_bytes += stores[i];
		} else if (stores[i] != FRESH_FIT_UNKNOWN)
			f->stores_missing++;
	}
}
