/* SPDX-License-Identifier: MIT */
/* plan: the action model, fingerprint and script generator on the incident's layout (built in
 * memory, with the incident's figures), and path 2 refused with its reason. */
#include <math.h>

#include "util.h" /* first: record.h uses bool */
#include "plan.h"
#include "record.h"
#include "tap.h"

#include <sys/wait.h>

static struct part parts[2];
static struct part_fs fs[2];
static struct part_fit fit[2];

static void incident(struct disk *d, struct layout *l)
{
	*d = (struct disk){ .path = "/dev/nvme0n1", .size_bytes = 2048408248320ULL, .lba_size = 512,
			    .lba_count = 4000797360ULL, .serial = "XG7000-SERIAL", .fd = -1 };
	parts[0] = (struct part){ .number = 1, .start_lba = 2048, .end_lba = 1050623, .size_bytes = 536870912,
				  .type_guid = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
				  .part_guid = "D6C40001-7E41-493D-A531-809DDA000001", .name = "EFI System", .attrs = 1 };
	parts[1] = (struct part){ .number = 2, .start_lba = 1050624, .end_lba = 4000797326ULL,
				  .size_bytes = 2047870311936ULL, .type_guid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
				  .part_guid = "D6C40002-7E41-493D-A531-809DDA000002", .name = "Linux filesystem" };
	memset(fs, 0, sizeof(fs));
	strcpy(fs[0].id.type, "vfat");
	strcpy(fs[0].id.uuid, "D6C4-0001");
	strcpy(fs[1].id.type, "ext4");
	strcpy(fs[1].id.uuid, "0d6c4e57-7e41-493d-a531-809dda000002");
	fs[1].is_ext = true;
	fs[1].ext = (struct extfs_info){ .block_size = 4096, .block_count = 499968337, .free_blocks = 134903811,
					 .min_blocks = 364058049, .clean = true };
	fit[0] = (struct part_fit){ .new_end_lba = 1050623 };
	fit[1] = (struct part_fit){ .crosses_end = true, .new_end_lba = 3907029134ULL, .new_block_count = 488247313 };
	*l = (struct layout){ .src = d, .fs = fs, .fit = fit, .delta_bytes = -48009314304LL,
			      .fs_clone_possible = true };
	l->table = (struct ptable){ .kind = PT_GPT, .lba_size = 512, .lba_count = 4000797360ULL,
				    .disk_guid = "D6C40000-7E41-493D-A531-809DDA000000", .first_usable_lba = 34,
				    .last_usable_lba = 4000797326ULL, .backup_header_lba = 4000797359ULL,
				    .primary_ok = true, .backup_ok = true, .parts = parts, .nparts = 2 };
	CHECK(lba_geometry(2048408248320ULL, 512, &l->src_geo) == 0);
	CHECK(lba_geometry(2000398934016ULL, 512, &l->tgt_geo) == 0);
}

/* bash itself is the judge of shell_quote(): `printf %s WORD` must print the string back. */
static void check_quote(const char *s)
{
	_cleanup_free_ char *q = shell_quote(s);
	_cleanup_free_ char *cmd = xasprintf("printf %%s %s", q);
	char got[1024];
	size_t n = 0;
	FILE *f;
	pid_t pid;
	int fds[2], st;

	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (n != strlen(s) || memcmp(got, s, n) != 0)
		fprintf(stderr, "shell_quote: %s does not give back its string\n", q);
	CHECK(n == strlen(s) && memcmp(got, s, n) == 0);
	/* one line: a control byte never appears raw */
	for (const char *c = q; *c; c++)
		CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
}

/* A plan whose outside strings (paths, serials, partition names) are hostile: the script parses
 * (bash -n), keeps every string on its line, and running it runs nothing they carry. */
static void check_hostile_script(const struct profile *prof)
{
	static const char evil[] = "a'b\"c$(touch MARK)`touch MARK`\nEOF\ntouch MARK\n'EOF'\x01\x1b[2J\\x;touch MARK #";
	char dir[] = "/tmp/test-plan.XXXXXX";
	struct disk d;
	struct layout l;
	struct plan p;
	_cleanup_free_ char *script = NULL, *path = NULL, *cmd = NULL, *mark = NULL;
	const char *names[2];
	FILE *f;
	int st;

	CHECK(mkdtemp(dir) != NULL);
	incident(&d, &l);
	d.path = (char *)evil;
	d.serial = (char *)evil;
	names[0] = parts[0].name;
	names[1] = parts[1].name;
	parts[0].name = (char *)evil;
	parts[1].name = (char *)"EOF";
	CHECK(plan_build(&l, prof, "2000398934016", evil, evil, NULL, PLAN_COST, &p) == 0);
	script = plan_script(&p, evil);
	/* no line of the script starts with a word an attacker chose */
	for (const char *c = script; (c = strchr(c, '\n')); c++) {
		CHECK(strncmp(c + 1, "touch", 5) != 0);
		CHECK(strncmp(c + 1, "EOF", 3) != 0);
		CHECK(strncmp(c + 1, "'EOF'", 5) != 0);
	}
	CHECK(strchr(script, '\x01') == NULL && strchr(script, '\x1b') == NULL);
	CHECK(strstr(script, "<<") == NULL); /* no here-document at all */
	/* the name reaches sfdisk hex-escaped, whole */
	CHECK(strstr(script, "name=\"a'\\''b\\x22c$(touch MARK)`touch MARK`\\x0aEOF\\x0atouch MARK\\x0a'\\''EOF'\\''"
			     "\\x01\\x1b[2J\\x5cx;touch MARK #\"") != NULL);
	path = xasprintf("%s/clone.sh", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(script, f) >= 0 && fclose(f) == 0);
	cmd = xasprintf("bash -n %s", path);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Run it: the source does not exist, so the guard stops it (exit 3) after the assignments
	 * that carry the strings; nothing they hold may have run. */
	free(cmd);
	cmd = xasprintf("cd %s && SWAPTOOL=false bash ./clone.sh >out 2>&1", dir);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	mark = xasprintf("%s/MARK", dir);
	CHECK(access(mark, F_OK) != 0);
	plan_free(&p);
	parts[0].name = (char *)names[0];
	parts[1].name = (char *)names[1];
	free(cmd);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	struct profile *prof = NULL;
	_cleanup_free_ char *perr = NULL;
	struct disk d;
	struct layout l;
	struct plan p;
	char fp[65], fp2[65];
	/* the shrink comes after the copy of the blocks below the new end: it happens on the way */
	const enum plan_act want[] = { PA_CHECK, PA_E2FSCK, PA_COPY_RAW, PA_COPY_USED, PA_SHRINK, PA_FSCK,
				       PA_WRITE_TABLE, PA_VERIFY, PA_MANUAL };

	CHECK(profile_load(NULL, &prof, &perr) == 0);
	incident(&d, &l);
	CHECK(plan_build(&l, prof, "2000398934016", NULL, NULL, NULL, PLAN_COST, &p) == 0);
	CHECK(p.clone_possible && p.needs_shrink);
	CHECK_U64(p.nacts, ARRAY_SIZE(want));
	for (size_t i = 0; i < p.nacts && i < ARRAY_SIZE(want); i++)
		CHECK_STR(plan_act_name(p.acts[i].kind), plan_act_name(want[i]));
	CHECK_U64(p.acts[4].blocks_from, 499968337);
	CHECK_U64(p.acts[4].blocks_to, 488247313);
	CHECK_U64(p.acts[4].src_offset, 537919488);
	CHECK_U64(p.acts[4].tgt_offset, 537919488);
	CHECK(p.acts[4].destructive && !p.acts[1].destructive && !p.acts[0].destructive);
	CHECK(strstr(p.acts[4].title, "on its way to the target") != NULL);
	CHECK(strstr(p.acts[4].title, "the source is only read") != NULL);
	CHECK_U64(p.acts[2].bytes, 536870912);
	CHECK_U64(p.acts[2].src_offset, 1048576);
	CHECK_U64(p.acts[3].bytes, (3907029134ULL - 1050624 + 1) * 512);
	/* the copy stops at the new end; nothing writes the source */
	CHECK_U64(p.acts[3].blocks_to, 488247313);
	CHECK_U64(p.tgt_geo.last_lba, 3907029167ULL);
	for (size_t i = 0; i < p.nacts; i++)
		CHECK(!p.acts[i].command || (!strstr(p.acts[i].command, "resize2fs") && !strstr(p.acts[i].command, "UNDO")));
	CHECK(strstr(p.acts[6].command, "last-lba: 3907029134") != NULL);
	CHECK(strstr(p.acts[6].command, "2: start=1050624, size=3905978511") != NULL);
	CHECK(strstr(p.acts[6].command, "attrs=\"RequiredPartition\"") != NULL);
	CHECK(strstr(p.acts[6].title, "3,907,029,167") != NULL);

	/* path 1: the profile's commands and the incident's figures */
	CHECK(p.nfresh >= 9);
	CHECK_STR(p.fresh[0].command, "swaptool backup");
	CHECK(strstr(p.fresh[6].title, "~50 min") != NULL);
	CHECK(strstr(p.fresh[6].note, "never rsync") != NULL);
	CHECK_STR(p.fresh[6].command, prof->cmd_refetch);
	CHECK_STR(p.fresh[5].command, prof->cmd_runtime_install);

	/* the clone's pace: NVMe, unless a USB link is slower (80 % of its raw rate); the slowest counts */
	{
		double nvme = plan_clone_seconds(&p);

		CHECK(plan_rate(&p) == PLAN_RATE);
		plan_limit_link(&p, "target", 0); /* unknown speed: ignored */
		CHECK(plan_rate(&p) == PLAN_RATE && p.link_side == NULL);
		plan_limit_link(&p, "target", 20000); /* 2 GB/s: faster than the drive, no limit */
		CHECK(plan_rate(&p) == PLAN_RATE);
		plan_limit_link(&p, "source", 480);
		plan_limit_link(&p, "target", 5000);
		CHECK_U64((uint64_t)plan_rate(&p), 48000000);
		CHECK_STR(p.link_side, "source");
		CHECK(fabs(plan_clone_seconds(&p) - nvme * PLAN_RATE / 48e6) < 1e-6 * plan_clone_seconds(&p));
		p.link_mbps = 0, p.link_side = NULL;
	}

	/* how the drives are attached: the record names each transport and the target's bridge, whose
	 * link paces the clone; the plan owns the bridge it was handed */
	{
		struct disk_bridge b = { .vendor_id = xstrdup("0bda"), .product_id = xstrdup("9210"),
					 .driver = xstrdup("uas"), .speed_mbps = 480 };
		struct disk_bridge none = { 0 };
		json_object *j, *t;

		plan_attach(&p, "source", "nvme", &none);
		plan_attach(&p, "target", "usb", &b);
		CHECK(b.vendor_id == NULL);
		CHECK_STR(p.link_side, "target");
		j = plan_json(&p);
		CHECK_STR(jget_str(jget(j, "source"), "transport"), "nvme");
		CHECK(jget(jget(j, "source"), "bridge") == NULL);
		t = jget(j, "target");
		CHECK_STR(jget_str(t, "transport"), "usb");
		CHECK_STR(jget_str(jget(t, "bridge"), "vendor_id"), "0bda");
		CHECK_U64(jget_u64(jget(t, "bridge"), "speed_mbps"), 480);
		json_object_put(j);
		p.link_mbps = 0, p.link_side = NULL;
	}

	/* the target's GPT */
	{
		struct gpt_new t;

		plan_gpt(&p, &t);
		CHECK_U64(t.lba_count, 3907029168ULL);
		CHECK_U64(t.nparts, 2);
		CHECK_U64(t.parts[1].start_lba, 1050624);
		CHECK_U64(t.parts[1].end_lba, 3907029134ULL);
		CHECK_STR(t.parts[1].part_guid, "D6C40002-7E41-493D-A531-809DDA000002");
		CHECK_STR(t.disk_guid, "D6C40000-7E41-493D-A531-809DDA000000");
		CHECK_U64(t.parts[0].attrs, 1);
		free(t.parts);
	}

	/* fingerprint: stable; changes with a UUID, a block count, the target; the shrunk one is
	 * the fingerprint of the source after the planned shrink */
	plan_fingerprint(&l, false, fp);
	CHECK_STR(fp, p.fingerprint);
	CHECK(strlen(fp) == 64);
	fs[1].ext.block_count = 488247313;
	plan_fingerprint(&l, false, fp2);
	CHECK_STR(fp2, p.fingerprint_shrunk);
	CHECK(strcmp(fp2, fp) != 0);
	fs[1].ext.block_count = 499968337;
	strcpy(fs[1].id.uuid, "0d6c4e57-0000-493d-a531-809dda000002");
	plan_fingerprint(&l, false, fp2);
	CHECK(strcmp(fp2, fp) != 0);
	strcpy(fs[1].id.uuid, "0d6c4e57-7e41-493d-a531-809dda000002");
	l.tgt_geo.bytes++;
	plan_fingerprint(&l, false, fp2);
	CHECK(strcmp(fp2, fp) != 0);
	l.tgt_geo.bytes--;

	/* the script: strict bash, the figures, a guard before every destructive command */
	{
		_cleanup_free_ char *s = plan_script(&p, "/usr/bin/swaptool");
		const char *c = s;
		int destructive = 0, guarded = 0;

		CHECK(strstr(s, "set -euo pipefail\n") != NULL);
		CHECK(strstr(s, "SOURCE='/dev/nvme0n1'") != NULL);
		CHECK(strstr(s, "SOURCE_SERIAL='XG7000-SERIAL'") != NULL);
		CHECK(strstr(s, "TARGET_BYTES=2000398934016") != NULL);
		CHECK(strstr(s, p.fingerprint) != NULL);
		CHECK(strstr(s, "e2undo") == NULL && strstr(s, "UNDO") == NULL);
		CHECK(strstr(s, "\n\"$SWAPTOOL\" clone \"$SOURCE\" \"$TARGET\" --yes") != NULL);
		for (;;) {
			static const char *const pats[] = { "\n\"$SWAPTOOL\" clone ", "\ndd ", "\ne2image ", "\nsfdisk " };
			const char *cmd = NULL, *prev;
			int back = 0;

			/* the next destructive command, whichever comes first */
			for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
				const char *q = strstr(c, pats[k]);

				if (q && (!cmd || q < cmd))
					cmd = q;
			}
			if (!cmd)
				break;
			prev = cmd;

			destructive++;
			/* within the two lines above the command */
			while (prev > s && back < 3)
				if (*--prev == '\n')
					back++;
			if (memmem(prev, cmd - prev + 1, "\nguard\n", 7))
				guarded++;
			c = cmd + 1;
		}
		if (guarded != destructive)
			fprintf(stderr, "%s", s);
		CHECK(destructive == 3); /* dd of p1, swaptool clone for the shrinking ext4, sfdisk */
		CHECK(guarded == destructive);
	}

	/* shell_quote, judged by bash */
	{
		char all[256];

		for (int i = 1; i < 256; i++)
			all[i - 1] = (char)i;
		all[255] = '\0';
		check_quote("");
		check_quote("plain");
		check_quote("'");
		check_quote("''");
		check_quote("it's");
		check_quote("a\nb");
		check_quote("$(touch X) `touch X` ${X:-y} \\ \" ! *");
		check_quote(all);
	}
	check_hostile_script(prof);

	/* JSON */
	{
		json_object *j = plan_json(&p);

		CHECK_U64(jget_u64(jget(j, "target"), "last_lba"), 3907029167ULL);
		CHECK(jget_i64(j, "delta_bytes") == -48009314304LL);
		CHECK(json_object_array_length(jget(jget(jget(j, "paths"), "fs_clone"), "actions")) == 9);
		json_object_put(j);
	}
	plan_free(&p);

	/* path 2 impossible: no actions, the reason kept, path 1 still complete */
	l.fs_clone_possible = false;
	strcpy(l.fs_clone_why, "the data of partition 2 needs 500000000 blocks");
	CHECK(plan_build(&l, prof, "2000398934016", NULL, NULL, NULL, PLAN_COST, &p) == 0);
	CHECK(!p.clone_possible);
	CHECK_U64(p.nacts, 0);
	CHECK(strstr(p.clone_why, "needs 500000000 blocks") != NULL);
	CHECK(p.nfresh >= 9);
	plan_free(&p);

	/* a bigger target: no shrink, a grow instead */
	l.fs_clone_possible = true;
	CHECK(lba_geometry(4000787030016ULL, 512, &l.tgt_geo) == 0);
	fit[1] = (struct part_fit){ .new_end_lba = l.tgt_geo.last_usable_lba,
				    .new_block_count = (l.tgt_geo.last_usable_lba - 1050624 + 1) * 512 / 4096 };
	CHECK(plan_build(&l, prof, "4TB", NULL, NULL, NULL, PLAN_COST, &p) == 0);
	CHECK(!p.needs_shrink);
	{
		bool grow = false, shrink = false;

		for (size_t i = 0; i < p.nacts; i++) {
			grow |= p.acts[i].kind == PA_GROW;
			shrink |= p.acts[i].kind == PA_SHRINK;
			if (p.acts[i].kind == PA_GROW)
				CHECK_U64(p.acts[i].blocks_to, fit[1].new_block_count);
		}
		CHECK(grow && !shrink);
	}
	plan_free(&p);

	/* plan_for: a layout it cannot make is a negative errno with the reason, before the source's
	 * table is read (no descriptor needed); NULL why is fine */
	{
		struct disk d = { .path = "src.img", .dev = "src.img", .fd = -1, .size_bytes = 2000398934016ULL,
				  .lba_size = 512 };
		struct plan_target t = { .spec = "4096", .bytes = 4096, .lba_size = 512 };
		struct layout fl;
		_cleanup_free_ char *why = NULL;

		CHECK(plan_for(&d, &t, prof, "/home/nv", PLAN_COST, &fl, &p, &why) < 0);
		CHECK(why && strstr(why, "too small to hold a GPT"));
		layout_free(&fl);
		CHECK(plan_for(&d, &t, prof, "/home/nv", PLAN_COST, &fl, &p, NULL) < 0);
		layout_free(&fl);
	}
	profile_free(prof);
	return tap_done();
}
