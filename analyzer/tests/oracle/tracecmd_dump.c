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

/*
 * Length of the valid UTF-8 sequence at s[0..len), or 0 when s starts an
 * ill-formed one; *bad is then the length of its maximal subpart (what
 * Unicode replaces by one U+FFFD: the bytes that could begin a sequence).
 */
static size_t utf8_sequence(const unsigned char *s, size_t len, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3;
	else {
		*bad = 1;
		return 0;
	}
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i <= need; i++) {
		if (i >= len || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/*
 * Text as the converter's UTF-8 columns hold it: each ill-formed sequence
 * (its maximal subpart) replaced by U+FFFD, then escaped.
 */
static void put_text_bytes(const unsigned char *s, size_t len)
{
	static const unsigned char replacement[] = { 0xef, 0xbf, 0xbd };
	size_t i = 0, n, bad;

	while (i < len) {
		n = utf8_sequence(s + i, len - i, &bad);
		if (n) {
			put_escaped(s + i, n);
			i += n;
		} else {
			put_escaped(replacement, sizeof(replacement));
			i += bad;
		}
	}
}

/* A string value: the bytes up to the first NUL, or all of them. */
static void put_string(const unsigned char *s, size_t len)
{
	const unsigned char *nul = memchr(s, 0, len);

	put_text_bytes(s, nul ? (size_t)(nul - s) : len);
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
 * The C type of a field without qualifiers and location markers: "const",
 * "volatile", "__data_loc", "__rel_loc" and a trailing "[...]" dropped,
 * words joined by one space.  libtraceevent's type of "char disk[32]" is
 * "char[32]", of "__data_loc char[] name" "__data_loc char[]".
 */
static void bare_type(const char *type, char *out, size_t size)
{
	char buf[256];
	char *word, *save = NULL, *br;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", type);
	br = strchr(buf, '[');
	if (br)
		*br = 0;
	out[0] = 0;
	for (word = strtok_r(buf, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(word, "const") || !strcmp(word, "volatile") ||
		    !strcmp(word, "__data_loc") || !strcmp(word, "__rel_loc"))
			continue;
		n += snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? " " : "", word);
	}
}

/*
 * ntscope's contract: only plain char arrays are text (libtraceevent also
 * flags unsigned char and u8/s8 arrays as strings; "unsigned char line[32]"
 * is a list of bytes here), and a char field of size 0 (old kernels' "char
 * buf" of ftrace:print) is text too.
 */
static int is_char_string(const struct tep_format_field *f)
{
	char t[256];

	bare_type(f->type, t, sizeof(t));
	return !strcmp(t, "char") &&
	       (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC) || f->size == 0);
}

/*
 * Fields printed as their raw bytes: a void field of size 0, and the size-0
 * fields whose bytes are binary whatever their C type: ftrace:bprint's buf
 * (trace_printk's packed arguments) and ftrace:raw_data's (trace_marker_raw).
 */
static int is_raw_bytes(const struct tep_event *ev, const struct tep_format_field *f)
{
	char t[256];

	if (f->size != 0 || (f->flags & TEP_FIELD_IS_DYNAMIC))
		return 0;
	bare_type(f->type, t, sizeof(t));
	if (!strcmp(t, "void"))
		return 1;
	return !strcmp(ev->system, "ftrace") && !strcmp(f->name, "buf") &&
	       (!strcmp(ev->name, "bprint") || !strcmp(ev->name, "raw_data"));
}

/*
 * ftrace:kernel_stack's and user_stack's callers: declared "unsigned long
 * caller[8]", but kernels >= 5.x write as many frames as the stack has (the
 * event's "int size"), fewer or more than eight, and trace-cmd's stack
 * handler prints the words from the field to the record's end.
 */
static int is_stack_frames(const struct tep_event *ev, const struct tep_format_field *f)
{
	return !strcmp(ev->system, "ftrace") && !strcmp(f->name, "caller") &&
	       (!strcmp(ev->name, "kernel_stack") || !strcmp(ev->name, "user_stack")) &&
	       (f->flags & TEP_FIELD_IS_ARRAY);
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
		      struct tep_format_field *f, const char *label,
		      struct tep_record *rec)
{
	const unsigned char *data = rec->data;
	const unsigned char *p;
	int len;

	printf("\t%s=", label);

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
	} else if (is_stack_frames(ev, f)) {
		/* A stack's frames: declared caller[8], written as many as the
		 * stack has; trace-cmd prints every one up to the record's end. */
		p = data + f->offset;
		len = rec->size - f->offset;
		len -= len % element_size(tep, f);
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
	if (is_raw_bytes(ev, f)) {
		put_escaped(p, len);
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

/*
 * Column labels, as ntscope names its columns (analyzer/README.md): the
 * field's name ("field_<name>" for ts, cpu, pid and comm), and for a name an
 * earlier field took, "<name>_2", "<name>_3" ..., the first that no column
 * has taken and no field of the event is named.  Printed without the
 * "field_" prefix, as parquet_dump.py prints those columns.
 */
#define MAX_LABELS 512
#define LABEL_LEN 300

static int label_taken(char (*names)[LABEL_LEN], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

static const char *row_columns[] = { "ts", "cpu", "pid", "comm" };

static void copy_label(char *dst, const char *src)
{
	size_t n = strnlen(src, LABEL_LEN - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static void wanted_name(const char *name, char *out)
{
	size_t i;

	for (i = 0; i < sizeof(row_columns) / sizeof(row_columns[0]); i++)
		if (!strcmp(name, row_columns[i])) {
			snprintf(out, LABEL_LEN, "field_%.*s", LABEL_LEN - 8, name);
			return;
		}
	copy_label(out, name);
}

/* names[0..n): the event's column names in order; labels get the result. */
static void make_labels(char (*names)[LABEL_LEN], int n, char (*labels)[LABEL_LEN])
{
	static char wanted[MAX_LABELS][LABEL_LEN];
	static char taken[MAX_LABELS + 4][LABEL_LEN];
	char cand[LABEL_LEN];
	int ntaken = 0, i, k;

	for (i = 0; i < 4; i++)
		copy_label(taken[ntaken++], row_columns[i]);
	for (i = 0; i < n; i++)
		wanted_name(names[i], wanted[i]);
	for (i = 0; i < n; i++) {
		if (!label_taken(taken, ntaken, wanted[i])) {
			copy_label(labels[i], wanted[i]);
		} else {
			for (k = 2;; k++) {
				if (snprintf(cand, sizeof(cand), "%.*s_%d", LABEL_LEN - 16, wanted[i], k) >= (int)sizeof(cand))
					die("field name %s is too long", wanted[i]);
				if (!label_taken(taken, ntaken, cand) &&
				    !label_taken(wanted, n, cand))
					break;
			}
			copy_label(labels[i], cand);
		}
		copy_label(taken[ntaken++], labels[i]);
	}
	for (i = 0; i < n; i++)
		if (!strncmp(labels[i], "field_", 6) && (!strcmp(labels[i] + 6, "ts") ||
		    !strcmp(labels[i] + 6, "cpu") || !strcmp(labels[i] + 6, "pid") ||
		    !strcmp(labels[i] + 6, "comm")))
			memmove(labels[i], labels[i] + 6, strlen(labels[i] + 6) + 1);
}

struct dump_ctx {
	const char *buffer;
	unsigned long long events;
};

/* ftrace's message events, whose text ntscope keeps in a "text" column. */
static int is_message_event(const struct tep_event *ev)
{
	return !strcmp(ev->system, "ftrace") &&
	       (!strcmp(ev->name, "print") || !strcmp(ev->name, "bprint") ||
		!strcmp(ev->name, "bputs"));
}

/* The fields printed for an event, in order, and their column labels. */
struct event_columns {
	int id;
	int n;
	struct tep_format_field *fields[MAX_LABELS];
	char labels[MAX_LABELS][LABEL_LEN];
	struct event_columns *next;
};

static struct event_columns *columns_of(struct tep_event *ev)
{
	static struct event_columns *cache;
	static char names[MAX_LABELS][LABEL_LEN];
	struct event_columns *c;
	struct tep_format_field **fields;
	int pass, i;

	for (c = cache; c; c = c->next)
		if (c->id == ev->id)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		die("out of memory");
	c->id = ev->id;
	for (pass = 0; pass < 2; pass++) {
		fields = pass == 0 ? tep_event_common_fields(ev) : tep_event_fields(ev);
		if (!fields && (pass == 0 ? ev->format.nr_common : ev->format.nr_fields))
			die("out of memory listing the fields of %s:%s", ev->system, ev->name);
		for (i = 0; fields && fields[i]; i++) {
			if (pass == 0 && (!strcmp(fields[i]->name, "common_type") ||
					  !strcmp(fields[i]->name, "common_pid")))
				continue;
			if (c->n >= MAX_LABELS - 1)
				die("event %s:%s has more than %d fields", ev->system, ev->name, MAX_LABELS - 1);
			c->fields[c->n] = fields[i];
			copy_label(names[c->n++], fields[i]->name);
		}
		free(fields);
	}
	if (is_message_event(ev))
		copy_label(names[c->n], "text");
	make_labels(names, c->n + is_message_event(ev), c->labels);
	c->next = cache;
	cache = c;
	return c;
}

/*
 * The text of a message event as trace-cmd report prints it: libtraceevent's
 * event info ("<ip symbol>: <text>") after its first ": ", one trailing
 * newline dropped.  <null> where libtraceevent has no format or string for
 * the address (bprint: "(NO FORMAT FOUND at ...)"; bputs: the address in hex).
 */
static void put_text(struct tep_handle *tep, struct tep_event *ev,
		     struct tep_record *rec)
{
	struct tep_format_field *str;
	struct trace_seq s;
	const char *t;
	char hex[32];
	size_t len;

	trace_seq_init(&s);
	tep_print_event(tep, &s, rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	t = strstr(s.buffer, ": ");
	t = t ? t + 2 : s.buffer;
	len = strlen(t);
	if (len && t[len - 1] == '\n')
		len--;
	str = tep_find_field(ev, "str");
	if (!strcmp(ev->name, "bprint") && !strncmp(t, "(NO FORMAT FOUND at ", 20)) {
		fputs("<null>", stdout);
	} else if (!strcmp(ev->name, "bputs") && str &&
		   snprintf(hex, sizeof(hex), "%llx",
			    tep_read_number(tep, (char *)rec->data + str->offset, str->size)) > 0 &&
		   len == strlen(hex) && !strncmp(t, hex, len)) {
		fputs("<null>", stdout);
	} else {
		put_text_bytes((const unsigned char *)t, len);
	}
	trace_seq_destroy(&s);
}

static int dump_record(struct tracecmd_input *handle, struct tep_record *rec,
		       int cpu, void *data)
{
	struct dump_ctx *ctx = data;
	struct tep_handle *tep = tracecmd_get_tep(handle);
	struct tep_event *ev = tep_find_event_by_record(tep, rec);
	struct event_columns *cols;
	const char *comm;
	int pid, i;

	if (!ev)
		die("buffer '%s' cpu %d ts %llu: record of unknown event type %d",
		    ctx->buffer, cpu, rec->ts, tep_data_type(tep, rec));
	pid = tep_data_pid(tep, rec);
	/* Only saved cmdlines count: libtraceevent says "<idle>" for pid 0. */
	comm = (pid != 0 && tep_is_pid_registered(tep, pid)) ?
		tep_data_comm_from_pid(tep, pid) : "<...>";

	put_escaped((const unsigned char *)ctx->buffer, strlen(ctx->buffer));
	printf("\t%d\t%llu\t%d\t", rec->cpu, rec->ts, pid);
	put_text_bytes((const unsigned char *)comm, strlen(comm));
	printf("\t%s:%s", ev->system, ev->name);

	cols = columns_of(ev);
	for (i = 0; i < cols->n; i++)
		put_field(tep, ev, cols->fields[i], cols->labels[i], rec);
	if (is_message_event(ev)) {
		printf("\t%s=", cols->labels[cols->n]);
		put_text(tep, ev, rec);
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

	/* Print formats are only used for the message events' text; the parse
	 * warnings of the others are noise. */
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
