/*
 * tracecmd_dump: the differential-test oracle for ntscope's trace.dat
 * converter.  It decodes a trace.dat with libtracecmd/libtraceevent (the
 * reference implementation, not ntscope's code) and prints every event
 * record of every buffer as one canonical, tab-separated line:
 *
 *   <buffer>\t<cpu>\t<ts>\t<pid>\t<comm>\t<system>:<event>\t<field>=<value>...
 *
 * The format is specified in README.md beside this file; parquet_dump.py
 * prints the same lines from the converter's Parquet output.
 *
 * Usage: tracecmd_dump TRACE.dat            dump every event
 *        tracecmd_dump --fields TRACE.dat   list the event formats as
 *                                           libtraceevent parsed them
 * Exit 0 on success, 2 on any error (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-cmd.h>

static const char *trace_path;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tracecmd_dump: %s: ", trace_path ? trace_path : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Bytes < 0x20, >= 0x7f and '\\' become \xNN; the rest is literal. */
static void put_escaped(const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\') {
			putchar('\\');
			putchar('x');
			putchar(hex[c >> 4]);
			putchar(hex[c & 0xf]);
		} else {
			putchar(c);
		}
	}
}

/* A string value: the bytes up to the first NUL, or all of them. */
static void put_string(const unsigned char *s, size_t len)
{
	const unsigned char *nul = memchr(s, 0, len);

	put_escaped(s, nul ? (size_t)(nul - s) : len);
}

static void put_int(struct tep_handle *tep, const void *ptr, int size,
		    int is_signed)
{
	unsigned long long v = tep_read_number(tep, ptr, size);

	if (!is_signed) {
		printf("%llu", v);
		return;
	}
	switch (size) {
	case 1: printf("%d", (int)(signed char)v); break;
	case 2: printf("%d", (int)(short)v); break;
	case 4: printf("%d", (int)v); break;
	default: printf("%lld", (long long)v); break;
	}
}

static int is_int_size(int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * libtraceevent flags u8/s8 arrays as strings too; ntscope's contract
 * treats only char arrays as strings (u8 cdw10[24] is a list of ints).
 */
static int is_char_string(const struct tep_format_field *f)
{
	return (f->flags & TEP_FIELD_IS_STRING) && strstr(f->type, "char");
}

/*
 * Element size of an array field.  libtraceevent leaves it 0 for dynamic
 * arrays whose element type is not one of u8..s64/char (e.g.
 * "__data_loc unsigned int[]", "u32 buf[]", "void data"); derive it from
 * the C type then (void: bytes).
 */
static int element_size(struct tep_handle *tep, const struct tep_format_field *f)
{
	const char *t = f->type;

	if (f->elementsize)
		return f->elementsize;
	if (strstr(t, "long long") || strstr(t, "64"))
		return 8;
	if (strstr(t, "long"))
		return tep_get_long_size(tep);
	if (strstr(t, "short") || strstr(t, "16"))
		return 2;
	if (strstr(t, "char") || strstr(t, "8") || strstr(t, "bool") ||
	    strstr(t, "void"))
		return 1;
	if (strstr(t, "int") || strstr(t, "32") || strstr(t, "pid_t"))
		return 4;
	return 0;
}

static void put_field(struct tep_handle *tep, struct tep_event *ev,
		      struct tep_format_field *f, struct tep_record *rec)
{
	const unsigned char *data = rec->data;
	const unsigned char *p;
	int len;

	printf("\t%s=", f->name);

	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		struct trace_seq s;

		if (f->offset + f->size > rec->size)
			die("event %s:%s field %s: location word at %d+%d beyond record size %d (cpu %d ts %llu)",
			    ev->system, ev->name, f->name, f->offset, f->size,
			    rec->size, rec->cpu, rec->ts);
		trace_seq_init(&s);
		p = tep_get_field_raw(&s, ev, f->name, rec, &len, 0);
		trace_seq_destroy(&s);
		if (!p)
			die("event %s:%s field %s: libtraceevent cannot locate it",
			    ev->system, ev->name, f->name);
		/* Old 2-byte __data_loc strings carry no length: up to NUL. */
		if (f->size == 2)
			len = rec->size - (int)(p - data);
	} else if (f->size == 0) {
		/* A flexible array member (ftrace:print "char buf[]",
		 * ftrace:bprint "u32 buf[]"): its bytes run to the record's end. */
		p = data + f->offset;
		len = rec->size - f->offset;
	} else {
		p = data + f->offset;
		len = f->size;
	}
	if (len < 0 || p < data || p + len > data + rec->size)
		die("event %s:%s field %s: bytes [%ld, %ld) beyond record size %d (cpu %d ts %llu)",
		    ev->system, ev->name, f->name, (long)(p - data),
		    (long)(p - data) + len, rec->size, rec->cpu, rec->ts);

	if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) && f->size != 0) {
		if (!is_int_size(f->size))
			die("event %s:%s field %s: scalar of size %d is not an integer of size 1, 2, 4 or 8",
			    ev->system, ev->name, f->name, f->size);
		put_int(tep, p, f->size, f->flags & TEP_FIELD_IS_SIGNED);
		return;
	}
	if (is_char_string(f)) {
		put_string(p, len);
		return;
	}

	int esize = element_size(tep, f);
	int i;

	if (!is_int_size(esize))
		die("event %s:%s field %s (type '%s'): array element size %d is not 1, 2, 4 or 8",
		    ev->system, ev->name, f->name, f->type, esize);
	if (len % esize)
		die("event %s:%s field %s: array of %d bytes is not a multiple of its element size %d (cpu %d ts %llu)",
		    ev->system, ev->name, f->name, len, esize, rec->cpu, rec->ts);
	putchar('[');
	for (i = 0; i < len / esize; i++) {
		if (i)
			putchar(',');
		put_int(tep, p + i * esize, esize, f->flags & TEP_FIELD_IS_SIGNED);
	}
	putchar(']');
}

struct dump_ctx {
	const char *buffer;
	unsigned long long events;
};

static int dump_record(struct tracecmd_input *handle, struct tep_record *rec,
		       int cpu, void *data)
{
	struct dump_ctx *ctx = data;
	struct tep_handle *tep = tracecmd_get_tep(handle);
	struct tep_event *ev = tep_find_event_by_record(tep, rec);
	struct tep_format_field **fields;
	const char *comm;
	int pid, i, pass;

	if (!ev)
		die("buffer '%s' cpu %d ts %llu: record of unknown event type %d",
		    ctx->buffer, cpu, rec->ts, tep_data_type(tep, rec));
	pid = tep_data_pid(tep, rec);
	/* Only saved cmdlines count: libtraceevent says "<idle>" for pid 0. */
	comm = (pid != 0 && tep_is_pid_registered(tep, pid)) ?
		tep_data_comm_from_pid(tep, pid) : "<...>";

	put_escaped((const unsigned char *)ctx->buffer, strlen(ctx->buffer));
	printf("\t%d\t%llu\t%d\t", rec->cpu, rec->ts, pid);
	put_escaped((const unsigned char *)comm, strlen(comm));
	printf("\t%s:%s", ev->system, ev->name);

	for (pass = 0; pass < 2; pass++) {
		fields = pass == 0 ? tep_event_common_fields(ev) : tep_event_fields(ev);
		if (!fields && (pass == 0 ? ev->format.nr_common : ev->format.nr_fields))
			die("out of memory listing the fields of %s:%s", ev->system, ev->name);
		for (i = 0; fields && fields[i]; i++) {
			if (pass == 0 && (!strcmp(fields[i]->name, "common_type") ||
					  !strcmp(fields[i]->name, "common_pid")))
				continue;
			put_field(tep, ev, fields[i], rec);
		}
		free(fields);
	}
	putchar('\n');
	ctx->events++;
	return 0;
}

static void dump_buffer(struct tracecmd_input *handle, const char *name)
{
	struct dump_ctx ctx = { .buffer = name, .events = 0 };

	if (tracecmd_iterate_events(handle, NULL, 0, dump_record, &ctx) < 0)
		die("libtracecmd failed iterating the events of buffer '%s'", name);
}

static void list_fields(struct tep_handle *tep)
{
	int n = tep_get_events_count(tep);
	int i, j, pass;

	for (i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(tep, i);

		printf("%s:%s id=%d\n", ev->system, ev->name, ev->id);
		for (pass = 0; pass < 2; pass++) {
			struct tep_format_field **f = pass == 0 ?
				tep_event_common_fields(ev) : tep_event_fields(ev);

			for (j = 0; f && f[j]; j++)
				printf("\t%s\ttype='%s' offset=%d size=%d arraylen=%u elementsize=%u flags=%s%s%s%s%s%s\n",
				       f[j]->name, f[j]->type, f[j]->offset, f[j]->size,
				       f[j]->arraylen, f[j]->elementsize,
				       f[j]->flags & TEP_FIELD_IS_SIGNED ? "signed," : "",
				       f[j]->flags & TEP_FIELD_IS_ARRAY ? "array," : "",
				       f[j]->flags & TEP_FIELD_IS_STRING ? "string," : "",
				       f[j]->flags & TEP_FIELD_IS_DYNAMIC ? "dynamic," : "",
				       f[j]->flags & TEP_FIELD_IS_RELATIVE ? "relative," : "",
				       f[j]->flags & TEP_FIELD_IS_POINTER ? "pointer," : "");
			free(f);
		}
	}
}

int main(int argc, char **argv)
{
	struct tracecmd_input *handle;
	int fields_only = 0;
	int i, n;

	if (argc == 3 && !strcmp(argv[1], "--fields")) {
		fields_only = 1;
		trace_path = argv[2];
	} else if (argc == 2 && argv[1][0] != '-') {
		trace_path = argv[1];
	} else {
		fprintf(stderr, "usage: tracecmd_dump [--fields] TRACE.dat\n");
		return 2;
	}

	/* Print formats are not interpreted; their parse warnings are noise. */
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);

	handle = tracecmd_open(trace_path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!handle)
		die("libtracecmd cannot open it (%s); is it a trace-cmd trace.dat?",
		    errno ? strerror(errno) : "bad format");

	if (fields_only) {
		list_fields(tracecmd_get_tep(handle));
		tracecmd_close(handle);
		return 0;
	}

	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	dump_buffer(handle, "");
	n = tracecmd_buffer_instances(handle);
	for (i = 0; i < n; i++) {
		const char *name = tracecmd_buffer_instance_name(handle, i);
		struct tracecmd_input *inst = tracecmd_buffer_instance_handle(handle, i);

		if (!inst)
			die("libtracecmd cannot open buffer instance %d ('%s')", i,
			    name ? name : "?");
		dump_buffer(inst, name);
		tracecmd_close(inst);
	}
	tracecmd_close(handle);

	if (fflush(stdout) != 0 || ferror(stdout))
		die("writing the dump to stdout failed: %s", strerror(errno));
	return 0;
}
