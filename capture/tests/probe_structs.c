/* Stand-ins for the kernel structures ntscope-capture's probes read (capture/ntscope-capture,
 * probe_catalogue), with the members they read placed among others, inside anonymous unions
 * and after bitfields as real kernels have them. capture/tests/test_capture.sh compiles this
 * with -g, has pahole turn the DWARF into BTF (a base file, and split BTF for the module types
 * as /sys/kernel/btf/<module> holds them), and checks the capture's BTF reader against the
 * compiler's own offsetof() and sizeof() (printed by main() below). */
#include <stddef.h>
#include <stdio.h>

#ifndef PART_MODULE /* vmlinux: block layer and sockets */
struct request_queue { void *last_merge; long flags; void *queuedata; };
struct blk_mq_hw_ctx { long state[3]; void *sched_data; unsigned int queue_num; };
struct request {
	struct request_queue *q;
	void *mq_ctx;
	struct blk_mq_hw_ctx *mq_hctx;
	unsigned int cmd_flags;
	unsigned int rq_flags:3, unused:29;
	union { int internal_tag; struct { short a, b; }; };
	int tag;
	unsigned long long start_time_ns;
};
struct sock { char skc[64]; union { void *sk_user_data; unsigned long flags; }; int sk_rcvbuf; };
struct socket { int state; short type; unsigned long flags; void *file; struct sock *sk; };
struct request r0;
struct socket s0;
#endif

#ifndef PART_BASE /* nvme-core, nvme-tcp, nvmet, nvmet-tcp */
struct request_queue;
struct request;
struct sock;
struct socket;
struct nvme_common_command { unsigned char opcode; unsigned char flags; unsigned short command_id; unsigned int nsid; };
struct nvme_ctrl { int state; char pad[20]; int instance; unsigned short cntlid; };
struct nvme_request { void *cmd; unsigned long long result; unsigned char genctr; unsigned char retries; struct nvme_ctrl *ctrl; };
enum nvme_tcp_send_state { NVME_TCP_SEND_CMD_PDU = 0, NVME_TCP_SEND_H2C_PDU, NVME_TCP_SEND_DATA, NVME_TCP_SEND_DDGST };
struct nvme_tcp_queue { struct socket *sock; long io_work[4]; void *pdu; struct nvme_tcp_request *request; };
struct nvme_tcp_request {
	struct nvme_request req;
	void *pdu;
	struct nvme_tcp_queue *queue;
	unsigned int data_len;
	union { unsigned int pdu_len; struct { unsigned short lo, hi; }; };
	unsigned long offset;
	unsigned long data_sent;
	enum nvme_tcp_send_state state;
};
struct nvmet_ctrl { long subsys; char pad[80]; unsigned short cntlid; };
struct nvmet_sq { struct nvmet_ctrl *ctrl; long ref[2]; unsigned short qid; };
struct nvmet_fabrics_ops { void *owner; unsigned int type; };
struct nvmet_req { void *cmd; void *cqe; struct nvmet_sq *sq; char pad[300]; const struct nvmet_fabrics_ops *ops; };
enum nvmet_tcp_send_state { NVMET_TCP_SEND_DATA_PDU, NVMET_TCP_SEND_DATA, NVMET_TCP_SEND_R2T, NVMET_TCP_SEND_DDGST, NVMET_TCP_SEND_RESPONSE };
struct nvmet_tcp_cmd { void *queue; struct nvmet_req req; void *pdus[4]; unsigned int rbytes_done; unsigned int offset; void *cur_sg; enum nvmet_tcp_send_state state; };
struct nvmet_tcp_queue { struct socket *sock; void *port; char pad[160]; struct nvmet_tcp_cmd *snd_cmd; };
struct nvme_tcp_request t0;
struct nvmet_tcp_cmd c0;
struct nvmet_tcp_queue q0;
struct nvme_common_command n0;
#endif

#ifdef PART_MAIN /* the compiler's answers, in the capture's query form */
#define M(s, f) printf("member %s %s = %zu\n", #s, #f, offsetof(struct s, f))
int main(void)
{
	M(request, tag); M(request, q); M(request, mq_hctx); M(request_queue, queuedata);
	M(blk_mq_hw_ctx, queue_num); M(sock, sk_user_data); M(socket, sk);
	M(nvme_request, cmd); M(nvme_request, genctr); M(nvme_request, ctrl); M(nvme_ctrl, instance);
	M(nvme_ctrl, cntlid); M(nvme_tcp_request, req); M(nvme_tcp_request, offset); M(nvme_tcp_request, state);
	M(nvme_tcp_request, hi); M(nvme_tcp_queue, request); M(nvme_common_command, opcode);
	M(nvme_common_command, command_id); M(nvmet_req, cmd); M(nvmet_req, sq); M(nvmet_req, ops);
	M(nvmet_sq, qid); M(nvmet_sq, ctrl); M(nvmet_ctrl, cntlid); M(nvmet_fabrics_ops, type);
	M(nvmet_tcp_cmd, req); M(nvmet_tcp_cmd, state); M(nvmet_tcp_cmd, offset); M(nvmet_tcp_queue, snd_cmd);
	printf("size request = %zu\nsize nvme_tcp_request = %zu\n", sizeof(struct request), sizeof(struct nvme_tcp_request));
	printf("enumval NVME_TCP_SEND_CMD_PDU = %d\nenumval NVMET_TCP_SEND_DATA_PDU = %d\n", NVME_TCP_SEND_CMD_PDU, NVMET_TCP_SEND_DATA_PDU);
	printf("enumval NVMET_TCP_SEND_R2T = %d\nenumval NVMET_TCP_SEND_RESPONSE = %d\n", NVMET_TCP_SEND_R2T, NVMET_TCP_SEND_RESPONSE);
	return 0;
}
#endif
