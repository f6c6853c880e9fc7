"""Round 6 of the pasted lines (``test_pasted_round6.py`` says what they are): the node
(kernel, syslog, Slurm daemon) and Kubernetes lines, beside the row each gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.util import assert_pasted

# (line as pasted, kind, code, category); the comment names the thread
NODE = [
    # NVIDIA/nvtrust#77 (no row before this round)
    ('[  286.345361] NVRM: kfspPollForQueueEmpty_IMPL: Timed out waiting for FSP command que'
     'ue to be empty.',
     'gpu_lost', 'FSP', 'gpu_hardware'),
    # NVIDIA/nvtrust#77 (no row before this round)
    ('[  279.950855] NVRM: gpuHandleSanityCheckRegReadError_GH100: Possible bad register rea'
     'd: addr: 0x110804,  regvalue: 0xbadf4100,  error code: Unknown SYS_PRI_ERROR_CODE',
     'nvrm_error', 'bad_register_read', 'gpu_driver'),
    # ovro-lwa/lwa-issues#117
    ('[11189.970968] EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (cha'
     'nnel:2 slot:0 page:0xb757589 offset:0x140 grain:32 -  OVERFLOW err_code:0101:0092 sock'
     'et:1 imc:1 rank:0 bg:3 ba:0 row:1a1e8 col:180)',
     'edac', 'UE', 'node_failure'),
    # madMAx43v3r/chia-gigahorse#301
    ('[14328.198504] NVRM: Xid (PCI:0000:0a:00): 31, pid=13332, name=cuda_plot_k32_v, Ch 000'
     '00010, intr 00000000. MMU Fault: ENGINE CE2 HUBCLIENT_CE0 faulted @ 0x7f29_5b8c9000. F'
     'ault is of type FAULT_PRIV_VIOLATION ACCESS_TYPE_VIRT_READ',
     'xid', '31', 'user_code'),
    # madMAx43v3r/chia-gigahorse#301
    ("[14370.687545] NVRM: Xid (PCI:0000:0a:00): 62, pid='<unknown>', name=<unknown>, 2023b2"
     '30 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 00000000',
     'xid', '62', 'gpu_hardware'),
    # NVIDIA/open-gpu-kernel-modules#363
    ('NVRM: Xid (PCI:0000:08:00): 31, pid=169800, name=chrome, Ch 00000023, intr 00000000. M'
     'MU Fault: ENGINE CE0 HUBCLIENT_HSCE0 faulted @ 0x0_0abe0000. Fault is of type FAULT_PT'
     'E ACCESS_TYPE_VIRT_READ',
     'xid', '31', 'user_code'),
    # NVIDIA/open-gpu-kernel-modules#829
    ('[605633.376794] NVRM: Xid (PCI:0000:06:00): 120, GSP task exception: store access page'
     ' fault (cause:0xf) @ pc:0x13ebd80, partition:2#0, task:3',
     'xid', '120', 'gpu_driver'),
    # pcyin/tranX#41
    ('[2059991.491436] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,me      '
     '                                                                                      '
     '                         ms_allowed=0,global_oom,task_memcg=/user.slice,task=python3,p'
     'id=25315,uid=0',
     'oom_kill', 'oom-kill', 'oom_host'),
    # pcyin/tranX#41
    ('[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244      '
     '                                                                                      '
     '                         kB, anon-rss:31451456kB, file-rss:74816kB, shmem-rss:12296kB,'
     ' UID:0 pgtables:690                                                                   '
     '                                                  68kB oom_score_adj:0',
     'oom_kill', 'python3', 'oom_host'),
    # ShengcaiLiao/QAConv#19
    ('[448212.100902] sunloginclient invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVA'
     'BLE), order=0, oom_score_adj=0',
     'oom_kill', 'sunloginclient', 'oom_host'),
]

K8S = [
    # sapcc/helm-charts#548 (no row before this round)
    ('Message:             No nodes are available that match all of the predicates: Insuffic'
     'ient cpu (19), Insufficient memory (19), PodToleratesNodeTaints (10).',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # NVIDIA/k8s-device-plugin#430 (no row before this round)
    ('0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are avai'
     'lable: 1 No preemption victims found for incoming pod..',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # NVIDIA/gpu-operator#331
    ('      Reason:       OOMKilled',
     'pod_terminated', 'OOMKilled', 'oom_host'),
    # NVIDIA/gpu-operator#331
    ('      Reason:       CrashLoopBackOff',
     'pod_waiting', 'CrashLoopBackOff', 'unknown'),
    # kubeflow/trainer#1661
    ('Warning  Failed  113s   kubelet  Error: container create failed: time="2022-09-14T11:3'
     '5:13Z" level=error msg="runc create failed: unable to start container process: contain'
     'er init was OOM-killed (memory limit too low?)"',
     'k8s_event', 'Failed', 'unknown'),
    # NVIDIA/k8s-device-plugin#119
    ('Warning FailedScheduling 40s (x2 over 40s) default-scheduler 0/2 nodes are available: '
     '1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # AliyunContainerService/gpushare-scheduler-extender#59
    ('  Warning  FailedScheduling  6s (x5 over 3m1s)  default-scheduler  0/2 nodes are avail'
     'able: 2 Insufficient aliyun.com/gpu-mem`',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # kubernetes/kubernetes#91600
    ('  Warning  Evicted         18m                kubelet, mgt04     The node was low on r'
     'esource: ephemeral-storage. Container calico-node was using 92Ki, which exceeds its re'
     'quest of 0.',
     'k8s_event', 'Evicted', 'storage'),
    # kubernetes/kubernetes#132001
    ('May 28 16:05:54 192-168-250-5 kubelet[2269385]: I0528 16:05:54.802914 2269385 eviction'
     '_manager.go:627] "Eviction manager: pod is evicted successfully" pod="sre/infras-logst'
     'ash-d484d57fc-rkx95"',
     'pod_evicted', 'Evicted', 'preemption'),
    # kubernetes/kubernetes#132001
    ('infras-logstash-d484d57fc-rkx95\t\tEvicted\t\tThe node was low on resource: ephemeral-'
     'storage. Threshold quantity: 30Gi, available: 24094024Ki. Container infras-logstash wa'
     's using 2456Ki, request is 0, has larger consumption of ephemeral-storage. ',
     'pod_evicted', 'Evicted', 'storage'),
    # elastisys/compliantkubernetes-apps#1173
    ('Warning  Evicted  37m   kubelet  The node was low on resource: ephemeral-storage. Cont'
     'ainer X was using 2596Ki, which exceeds its request of 0.',
     'k8s_event', 'Evicted', 'storage'),
    # cloud-ark/kubeplus#1382
    ('Message:      The node was low on resource: ephemeral-storage. Threshold quantity: 214'
     '6223340, available: 1883424Ki. Container helmer was using 10304Ki, request is 10Mi, ha'
     's larger consumption of ephemeral-storage. Container consumerui was using 52676Ki, req'
     'uest is 10Mi, has larger consumption of ephemeral-storage.',
     'pod_evicted', 'Evicted', 'storage'),
    # kubernetes/test-infra#4580
    ('`Evicted\t\tThe node was low on resource: nodefs.`',
     'pod_evicted', 'Evicted', 'preemption'),
]


@pytest.mark.parametrize(("name", "table"), [("node.log", NODE), ("describe.txt", K8S)])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, name, table)
