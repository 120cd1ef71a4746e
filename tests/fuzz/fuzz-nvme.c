/* SPDX-License-Identifier: MIT */
/* Fuzz target: nvme-cli binary dumps (id-ctrl, id-ns, smart-log, error-log; preflight --from-dumps).
 * The first byte picks the page and whether the input is fitted to the page's exact size (the
 * parsers refuse any other size, which would leave their field checks unreached). */
#include "fuzz.h"

#include "nvme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t page[] = { NVME_ID_CTRL_BYTES, NVME_ID_NS_BYTES, NVME_SMART_LOG_BYTES,
				       NVME_ERROR_ENTRY_BYTES };
	const char *why = NULL;
	unsigned kind, fit;
	uint8_t *buf;
	size_t len;

	if (size < 1)
		return 0;
	kind = data[0] & 3;
	fit = !(data[0] & 4);
	data++, size--;
	if (fit) {
		/* the error log is a whole number of 64-byte entries, up to 256 of them */
		size_t want = page[kind];
		if (kind == 3) {
			size_t n = size / want;
			want *= n < 1 ? 1 : n > NVME_ERROR_LOG_MAX_ENTRIES ? NVME_ERROR_LOG_MAX_ENTRIES : n;
		}
		len = want;
	} else
		len = size;
	buf = calloc(1, len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size < len ? size : len);
	switch (kind) {
	case 0: {
		struct nvme_info n = { 0 };
		if (nvme_parse_id_ctrl(buf, len, &n, &why) == 0) {
			(void)nvme_hmb_bytes(n.hmpre);
			(void)nvme_hmb_mb(n.hmmin);
			(void)nvme_temp_c(n.wctemp);
		}
		nvme_info_free(&n);
		break;
	}
	case 1: {
		struct nvme_ns_info ns = { 0 };
		(void)nvme_parse_id_ns(buf, len, 1, &ns, &why);
		break;
	}
	case 2: {
		struct nvme_smart s = { 0 };
		uint64_t bytes;
		if (nvme_parse_smart(buf, len, &s, &why) == 0) {
			(void)nvme_temp_c(s.temperature_k);
			(void)nvme_data_units_bytes(s.data_units_read, &bytes);
		}
		break;
	}
	default: {
		struct nvme_errlog e = { 0 };
		(void)nvme_parse_error_log(buf, len, &e, &why);
		break;
	}
	}
	free(buf);
	return 0;
}
