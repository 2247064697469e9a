import csv, json, re, subprocess, collections
HDR="source_id,source,date,gpu,gpus,nodes,model,precision,isl,osl,concurrency,tp,ep,dp_attention,framework,metric,value,tok_s_per_user,ttft_s,notes".split(',')
rows=[]
def add(**k):
    r={h:'' for h in HDR}; r.update({a:('' if b is None else b) for a,b in k.items()}); r['value']=str(r['value']).replace(',',''); rows.append(r)

GPUMAP={'B200':'b200','GB200':'gb200','H200':'h200-sxm','H100':'h100-sxm','L40S':'l40s'}
# ---------- TRT-LLM markdown tables ----------
def parse_md(fn):
    out=[]; model=None; cols=None
    for line in open(fn):
        line=line.strip()
        if line.startswith('## '): model=line[3:]; cols=None; continue
        if not line.startswith('|'): continue
        cells=[c.strip() for c in line.strip('|').split('|')]
        if cells[0].startswith('Sequence'): cols=cells[1:]; continue
        isl,osl=cells[0].split('/')
        for h,v in zip(cols,cells[1:]):
            if v: out.append((model,h,int(isl),int(osl),v))
    return out
def parse_hdr(h):
    m=re.match(r'(?:\*\*(\d+) GPUs\*\*<br/>)?(?:(\w+)<br/>)?(TP|DEP)(\d+)(?:,PP(\d+))? \((FP\d)\)',h)
    assert m,h
    ngpu,gname,kind,par,pp,prec=m.groups()
    pp=int(pp) if pp else 1; par=int(par)
    gpu='rtx-pro-6000-server' if ngpu else GPUMAP[gname]
    gpus=int(ngpu) if ngpu else par*pp
    return gpu,gpus,kind,par,pp,prec.lower()
SRC_NEW='NVIDIA/TensorRT-LLM@585c756579dc4d01f21fc13c2f604cdb461ac4f0:docs/source/developer-guide/perf-overview.md'
SRC_V10='NVIDIA/TensorRT-LLM@00f37686aa854010d68bcbd0f4ab000221541ca6:docs/source/performance/perf-overview.md'
SRC_V17='NVIDIA/TensorRT-LLM@258c7540c03517def55d9a5aadfa9288af474e1b:docs/source/performance/perf-overview.md'
for fn,src,date,metric,tag in [('raw/trt_new.md',SRC_NEW,'2025-12','output_tok_s_per_gpu','perf-overview (developer-guide, per-GPU units; table header "Output Throughput per GPU")'),
                                ('raw/trt_v10.md',SRC_V10,'2025-09','output_tok_s_system','perf-overview v1.0-era ("Total Output Throughput (tokens/sec)" = whole TP/PP group)')]:
    for model,h,isl,osl,v in parse_md(fn):
        gpu,gpus,kind,par,pp,prec=parse_hdr(h)
        dep=(kind=='DEP')
        notes=f'{tag}; trtllm-bench throughput, PyTorch backend, requests issued at max rate (offline max-throughput); column "{h.replace("<br/>"," ").replace("**","")}"'
        if dep: notes+='; DEP = attention data-parallel + expert-parallel (tp=ep=N, enable_attention_dp)'
        if pp>1: notes+=f'; PP={pp}'
        if gpu=='rtx-pro-6000-server': notes+='; RTX PRO 6000 Blackwell Server Edition'
        if fn.endswith('v10.md') and model in ('qwen3-235b-a22b','llama4-maverick'): notes+='; MoE: ep_size not stated per table'
        if model=='deepseek-r1': notes+='; DeepSeek-R1-0528 (FP4: nvidia/DeepSeek-R1-0528-NVFP4-v2; FP8: deepseek-ai/DeepSeek-R1-0528)'
        if model=='llama3-70b': notes+='; Llama 3.3 70B Instruct'
        if model=='llama3-405b': notes+='; Llama 3.1 405B Instruct'
        if model=='llama3-8b': notes+='; Llama 3.1 8B Instruct'
        if model=='gpt-oss-120b' and prec=='fp4': notes+='; gpt-oss MXFP4 weights'
        if fn.endswith('new.md'): notes+='; commit date approximate'
        add(source_id='trtllm',source=src,date=date,gpu=gpu,gpus=gpus,nodes=1,model=model,precision=prec,isl=isl,osl=osl,
            tp=par,ep=(par if dep else ''),dp_attention=('true' if dep else ''),framework='trtllm',metric=metric,value=v,notes=notes)
# v0.17 wide table
cols=[('h200-sxm','fp8'),('h100-sxm','fp8'),('GH200','fp8'),('l40s','fp8'),('A100','fp16')]
for line in open('raw/trt_v017.txt'):
    if line.startswith('#'): continue
    p=line.rstrip('\n').split('|'); model,tp,io=p[0],int(p[1]),p[2]; isl,osl=[int(x) for x in io.split(',')]
    for (gpu,prec),v in zip(cols,p[3:]):
        if not v or gpu in ('GH200','A100'): continue
        add(source_id='trtllm',source=SRC_V17,date='2025-02',gpu=gpu,gpus=tp,nodes=1,model=model,precision=prec,isl=isl,osl=osl,tp=tp,
            framework='trtllm',metric='output_tok_s_system',value=v,
            notes='perf-overview v0.17 ("token throughput in tokens/second", trtllm-bench Token Throughput = output tok/s for whole TP group); TRT engine flow; infinite request rate; '+
                  {'llama3-8b':'LLaMA v3.1 8B','llama3-70b':'LLaMA v3.1 70B','llama3-405b':'LLaMA v3.1 405B','mixtral-8x7b':'Mixtral 8x7B'}[model]+'; date approximate (v0.17 release)')
# ---------- AMD ROCm performance-results ----------
for line in open('raw/amd_perf_results.txt'):
    if line.startswith('#'): continue
    url,docker,date,model,prec,tp,isl,osl,nprompt,maxseq,thr=line.strip().split('|')
    add(source_id='amd-rocm',source=url,date=date,gpu='mi300x',gpus=tp,nodes=1,model=model,precision=prec,isl=isl,osl=osl,tp=tp,framework='vllm',
        metric='output_tok_s_system',value=thr,
        notes=f'AMD "Performance results with AMD ROCm software" page, vLLM throughput table ("Throughput (tokens/s)"); docker {docker}; 8x MI300X 192GB 750W; num_prompts={nprompt}, max_num_seqs={maxseq}; requests at infinite rate; AMBIGUOUS whether total (in+out) or generated tokens/s - page does not say; '+('amd/Llama-3.1-70B-Instruct-FP8-KV' if model=='llama3-70b' else 'amd/Llama-3.1-405B-Instruct-FP8-KV'))
# ---------- MLPerf v5.1 ----------
GIT='/work/.mirror/mlcommons+inference_results_v5.1/repo'
COMMIT=subprocess.check_output(['git','--git-dir',GIT+'/.git' if False else GIT,'rev-parse','HEAD']).decode().strip()
d=json.load(open('/tmp/mlp51.json'))
ACC={'NVIDIA B200-SXM-180GB':'b200','NVIDIA H200-SXM-141GB':'h200-sxm','Virtualized NVIDIA H200-SXM-141GB':'h200-sxm','NVIDIA H200-NVL-141GB':'h200-nvl',
     'NVIDIA H100-SXM-80GB':'h100-sxm','NVIDIA H100-NVL-94GB':'h100-nvl','NVIDIA GB200':'gb200','NVIDIA GB300':'gb300','AMD Instinct MI300X 192GB HBM3':'mi300x',
     'AMD Instinct MI325X 256GB HBM3e':'mi325x','AMD Instinct MI355X 288GB HBM3e':'mi355x','NVIDIA RTX PRO 6000 Blackwell Server Edition':'rtx-pro-6000-server','NVIDIA L40S':'l40s'}
MOD={'llama2-70b-99':'llama2-70b','llama2-70b-99.9':'llama2-70b','llama3.1-405b':'llama3-405b','llama3.1-8b':'llama3-8b','mixtral-8x7b':'mixtral-8x7b','deepseek-r1':'deepseek-r1'}
PREC={'fp8':'fp8','fp4':'fp4','mxfp4':'fp4','nvfp4':'fp4','fp16':'fp16','bf16':'fp16'}
def fw(s):
    s2=s.lower()
    if 'sglang' in s2: return 'sglang'
    if 'vllm' in s2: return 'vllm'
    if 'tensorrt' in s2 or 'trt' in s2: return 'trtllm'
    return s.split(',')[0][:40]
def perflog(loc):
    try: t=subprocess.check_output(['git','--git-dir',GIT,'show',f'HEAD:{loc}/performance/run_1/mlperf_log_summary.txt'],stderr=subprocess.DEVNULL).decode()
    except Exception: return None,None
    f=re.search(r'Mean First Token latency \(ns\)\s*:\s*(\d+)',t); p=re.search(r'Mean Time to Output Token \(ns\)\s*:\s*(\d+)',t)
    return (int(f.group(1)) if f else None),(int(p.group(1)) if p else None)
skipped=collections.Counter(); seen={}
ml=[]
for x in d:
    if x['Suite']!='datacenter' or x['Model'] not in MOD: continue
    gpu=ACC.get(x['Accelerator']); prec=PREC.get(x['weight_data_types'].lower())
    if not gpu: skipped['accel:'+x['Accelerator']]+=1; continue
    ml.append(x)
# dedupe llama2-70b-99 vs 99.9 identical values
key=lambda x:(x['Submitter'],x['Category'],x['Platform'],x['Scenario'],MOD[x['Model']],x['Performance_Result'])
cnt=collections.Counter(key(x) for x in ml)
done=set()
for x in ml:
    k=key(x); model=MOD[x['Model']]
    note_acc=''
    if model=='llama2-70b':
        if cnt[k]>1:
            if k in done: continue
            done.add(k); note_acc='llama2-70b-99 and -99.9 submissions report identical value (kept once)'
        else: note_acc=f'accuracy target {x["Model"]}'
    m=re.search(r'TOKENS_PER_SAMPLE: ([0-9.]+)',x['Accuracy'])
    osl_note=''
    ttft=tpot=None
    if x['Scenario'] in ('Server','Interactive'): ttft,tpot=perflog(x['Location'])
    gpu=ACC[x['Accelerator']]
    gpus=int(x['a#']); nodes=int(x['Nodes'])
    notes=f'MLPerf Inference v5.1 {x["Category"]}/{x["Availability"]}; scenario={x["Scenario"]}; submitter={x["Submitter"]}; system={x["System"]} ({x["Platform"]}); total accelerators={gpus*nodes}; value = generated (output) tokens/s for whole system (summary Performance_Result)'
    if x['Performance_Units']!='Tokens/s': notes+=f'; summary labels units "{x["Performance_Units"]}" but run log says "Completed tokens per second" (mislabel)'
    if x['Category']=='open': notes+='; OPEN division: model/implementation may be modified (e.g. pruned/finetuned/quantized differently) - not directly comparable to closed'
    if note_acc: notes+='; '+note_acc
    if m: notes+=f'; accuracy-run mean output tokens/sample={m.group(1)} (osl column = this)'
    if not PREC.get(x['weight_data_types'].lower()): notes+=f'; weight_data_types={x["weight_data_types"]} in summary (precision left empty)'
    if x['Accelerator'].startswith('Virtualized'): notes+='; virtualized H200'
    if ttft: notes+='; ttft_s = mean first-token latency from performance/run_1/mlperf_log_summary.txt'
    if tpot: notes+=f'; tok_s_per_user = 1e9/mean TPOT ({tpot} ns) from same log'
    notes+=f'; software: {x["Software"][:80]}'
    add(source_id='mlperf-v5.1',source=f'mlcommons/inference_results_v5.1@{COMMIT}:summary_results.json ({x["Location"]})',date='2025-09',gpu=gpu,gpus=gpus,nodes=nodes,
        model=model,precision=PREC.get(x['weight_data_types'].lower(),''),isl='',osl=(m.group(1) if m else ''),framework=fw(x['Software']),metric='output_tok_s_system',
        value=x['Performance_Result'],tok_s_per_user=(f'{1e9/tpot:.2f}' if tpot else ''),ttft_s=(f'{ttft/1e9:.4f}' if ttft else ''),notes=notes.replace(',',';') if False else notes)
with open('points.csv','w',newline='') as f:
    w=csv.DictWriter(f,fieldnames=HDR); w.writeheader(); w.writerows(rows)
print(len(rows), skipped)
