/* SPDX-License-Identifier: MIT */
/* Exact byte sizes: parsing of size specs and LBA arithmetic, and human renderings (TB / TiB). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Parse a size: "2000398934016" (bytes), "3907029168s" (sectors of lba_size),
 * "2TB" (10^12), "1.5GiB" (2^30), "98G" (single letters are binary, as in fio
 * and dd). A fraction is accepted only when it names a whole number of bytes:
 * "1.819TiB" is refused as inexact. Zero, negative, overflow and junk are
 * refused. On error returns -EINVAL/-ERANGE/-EOVERFLOW and sets *why to a
 * static reason for the message.
 */
int size_parse(const char *spec, uint32_t lba_size, uint64_t *bytes, const char **why);

/* A positive integer that fits in uint64 (counts, seconds, LBA sizes). */
int u64_parse(const char *s, uint64_t *out, const char **why);
/* A valid logical block size: a power of two from 512 to 65536. */
bool lba_size_valid(uint64_t lba_size);

/* LBA geometry of a disk of `bytes` with `lba_size`-byte LBAs, as GPT needs it. */
struct lba_geometry {
	uint64_t bytes;
	uint32_t lba_size;
	uint64_t lba_count;        /* whole LBAs; a tail shorter than one LBA is unusable */
	uint64_t last_lba;         /* where the backup GPT header lives */
	uint64_t first_usable_lba; /* after protective MBR, header and 128 x 128 B entries */
	uint64_t last_usable_lba;  /* before the backup entry array and header */
};
/* -EINVAL when the disk is too small to hold a GPT with 128 entries. */
int lba_geometry(uint64_t bytes, uint32_t lba_size, struct lba_geometry *g);
/* LBAs the 128 x 128-byte GPT entry array takes at this LBA size (32 at 512, 4 at 4096). */
uint64_t gpt_entry_lbas(uint32_t lba_size);

/* "2,048,408,248,320" */
const char *fmt_thousands(uint64_t v, char buf[32]);
/* "-48,009,314,304" */
const char *fmt_thousands_signed(int64_t v, char buf[32]);
/* "2.048 TB" (10^12, three decimals, as docs/incident.md writes it) */
const char *fmt_tb(uint64_t v, char buf[32]);
/* "1.863 TiB" */
const char *fmt_tib(uint64_t v, char buf[32]);
/* Best decimal unit with three significant decimals: "9.6 KB", "488.000 GB", "1.215 TB". */
const char *fmt_decimal(uint64_t v, char buf[32]);
/* Best binary unit: "40 MiB", "98.000 GiB". */
const char *fmt_binary(uint64_t v, char buf[32]);
