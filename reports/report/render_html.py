"""report.html: one self-contained page (no network): the report document embedded as
JSON, drawn as inline SVG by a small script (stacked stage breakdown per group,
per-stage CDFs, throughput and in-flight over time)."""
import html
import json

PAGE = r"""<!doctype html>
<html><head><meta charset="utf-8"><title>ntscope report</title>
<style>
body{font-family:system-ui,sans-serif;margin:20px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}.warning{background:#fff3cd}.error{background:#f8d7da}
svg{background:#fafafa;border:1px solid #ddd;margin:4px 0}.legend span{display:inline-block;margin-right:12px;font-size:12px}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
</style></head><body>
<h1>ntscope report</h1>
<div id="meta"></div>
<h2>pipeline_stats</h2><table id="stats"></table>
<h2>Stage breakdown (mean, top-level stages, stacked)</h2><div id="breakdown"></div>
<h2>Per-stage CDFs (the 8 largest groups)</h2><div id="cdfs"></div>
<h2>Throughput and in-flight over time</h2><div id="timeseries"></div>
<h2>Stage tables (microseconds)</h2><div id="tables"></div>
<script id="data" type="application/json">__DATA__</script>
<script>
const D = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const COLORS = ['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1','#ff9da7','#9c755f','#bab0ac','#1f77b4','#2ca02c'];
function el(tag, attrs, parent, text){const e=document.createElementNS(NS,tag);for(const k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;if(parent)parent.appendChild(e);return e;}
function h(tag, parent, text, cls){const e=document.createElement(tag);if(text!==undefined)e.textContent=text;if(cls)e.className=cls;parent.appendChild(e);return e;}
function us(ns){return ns===null||ns===undefined?'-':(ns/1000).toFixed(ns<100000?1:0);}
const set = D.primary_stage_set;
document.getElementById('meta').textContent = 'mode: '+D.mode+'   stage sets: '+D.stage_sets.join(', ')+
  '   clock offset: '+(D.clock.offset_ns===null?'-':(D.clock.offset_ns/1e9).toFixed(6)+' s +- '+us(D.clock.uncertainty_ns)+' us');
const st = document.getElementById('stats');
for (const s of D.pipeline_stats){const tr=h('tr',st,undefined,s.severity);h('td',tr,s.name);h('td',tr,String(s.value));h('td',tr,s.severity);h('td',tr,s.meaning);}
// stacked breakdown: one bar per group, segments = top-level stages of the first set
(function(){
  const div=document.getElementById('breakdown');
  const groups=D.groups.filter(g=>g.stages.some(s=>s.stage_set===set));
  if(!groups.length){h('p',div,'no stage data');return;}
  const stages=[];for(const g of groups)for(const s of g.stages)if(s.stage_set===set&&!s.parent&&s.stage!=='end_to_end'&&!stages.includes(s.stage))stages.push(s.stage);
  const W=1000,rowH=22,left=220,H=groups.length*rowH+40;
  const svg=el('svg',{width:W,height:H,id:'breakdown-svg'},div);
  let max=0;for(const g of groups){let t=0;for(const s of g.stages)if(s.stage_set===set&&stages.includes(s.stage))t+=Math.max(s.mean_ns,0);max=Math.max(max,t);}
  groups.forEach((g,i)=>{let x=left;const y=10+i*rowH;el('text',{x:4,y:y+14,'font-size':11},svg,g.key_text);
    stages.forEach((n,j)=>{const s=g.stages.find(s=>s.stage_set===set&&s.stage===n);if(!s)return;const w=Math.max(s.mean_ns,0)/max*(W-left-20);
      const r=el('rect',{x:x,y:y,width:w,height:rowH-6,fill:COLORS[j%COLORS.length],class:'seg'},svg);el('title',{},r,n+': '+us(s.mean_ns)+' us');x+=w;});});
  el('text',{x:left,y:H-8,'font-size':11},svg,'0 .. '+us(max)+' us (mean per stage)');
  const lg=h('div',div,undefined,'legend');stages.forEach((n,j)=>{const s=h('span',lg);const sw=h('span',s,undefined,'sw');sw.style.background=COLORS[j%COLORS.length];s.appendChild(document.createTextNode(n));});
})();
// CDFs: one chart per group (the 8 with the most I/Os), one line per stage, log x axis
(function(){
  const div=document.getElementById('cdfs');
  const largest=[...D.groups].sort((a,b)=>b.count-a.count).slice(0,8);
  for(const g of largest){
    const cdfs=g.cdf_pct_1_to_100.filter(c=>c.stage_set===set);if(!cdfs.length)continue;
    h('h3',div,'group: '+g.key_text);
    const W=1000,H=320,L=50,B=30;const svg=el('svg',{width:W,height:H,class:'cdf-svg'},div);
    let lo=Infinity,hi=0;for(const c of cdfs)for(const v of c.dur_ns)if(v>0){lo=Math.min(lo,v);hi=Math.max(hi,v);}
    if(!(hi>0))continue;const lx=v=>L+(Math.log10(Math.max(v,lo))-Math.log10(lo))/(Math.log10(hi)-Math.log10(lo)||1)*(W-L-170);
    el('line',{x1:L,y1:H-B,x2:W-170,y2:H-B,stroke:'#888'},svg);el('line',{x1:L,y1:10,x2:L,y2:H-B,stroke:'#888'},svg);
    for(let e=Math.ceil(Math.log10(lo));e<=Math.log10(hi);e++){const x=lx(10**e);el('text',{x:x-10,y:H-10,'font-size':10},svg,us(10**e)+'us');}
    el('text',{x:4,y:16,'font-size':10},svg,'100%');el('text',{x:4,y:H-B,'font-size':10},svg,'0%');
    cdfs.forEach((c,j)=>{const pts=c.dur_ns.map((v,k)=>lx(v).toFixed(1)+','+(H-B-(k+1)/100*(H-B-10)).toFixed(1)).join(' ');
      el('polyline',{points:pts,fill:'none',stroke:COLORS[j%COLORS.length],'stroke-width':1.5,class:'cdf-line'},svg);
      el('text',{x:W-165,y:20+j*14,'font-size':11,fill:COLORS[j%COLORS.length]},svg,c.stage);});
  }
})();
// time series: MB/s and in-flight for 'all' and each queue
(function(){
  const div=document.getElementById('timeseries');const qs=[...new Set(D.timeseries.map(r=>r.queue))];
  for(const [field,label] of [['mb_s','MB/s'],['inflight_avg','in-flight commands (time average)']]){
    h('h3',div,label);const W=1000,H=220,L=50,B=25;const svg=el('svg',{width:W,height:H,class:'ts-svg'},div);
    let xmax=0,ymax=0;for(const r of D.timeseries){xmax=Math.max(xmax,r.bin_start_ns+r.bin_ns);ymax=Math.max(ymax,r[field]);}
    if(!(xmax>0&&ymax>0))continue;
    el('line',{x1:L,y1:H-B,x2:W-150,y2:H-B,stroke:'#888'},svg);el('text',{x:4,y:16,'font-size':10},svg,ymax.toFixed(1));
    el('text',{x:W-200,y:H-6,'font-size':10},svg,(xmax/1e9).toFixed(2)+' s');
    qs.forEach((q,j)=>{const rs=D.timeseries.filter(r=>r.queue===q);
      const pts=rs.map(r=>(L+(r.bin_start_ns+r.bin_ns/2)/xmax*(W-L-150)).toFixed(1)+','+(H-B-r[field]/ymax*(H-B-10)).toFixed(1)).join(' ');
      el('polyline',{points:pts,fill:'none',stroke:COLORS[j%COLORS.length],'stroke-width':q==='all'?2:1,class:'ts-line'},svg);
      el('text',{x:W-145,y:20+j*14,'font-size':11,fill:COLORS[j%COLORS.length]},svg,q);});
  }
})();
// stage tables
(function(){
  const div=document.getElementById('tables');const cols=['count','mean_ns','p10_ns','p50_ns','p90_ns','p99_ns','p999_ns','max_ns'];
  for(const g of D.groups){h('h3',div,'group: '+g.key_text+'  count '+g.count+'  IOPS '+g.iops.toFixed(1)+'  MB/s '+g.mb_s.toFixed(2));
    const t=h('table',div);const hr=h('tr',t);h('th',hr,'stage');for(const c of cols)h('th',hr,c.replace('_ns',''));
    for(const s of g.stages){const tr=h('tr',t);h('td',tr,s.stage_set+' '+(s.parent?'\u00a0\u00a0':'')+s.stage);for(const c of cols)h('td',tr,c==='count'?String(s[c]):us(s[c]));}}
})();
</script></body></html>
"""


def render(doc):
    data = json.dumps(doc, default=str).replace("</", "<\\/")
    return PAGE.replace("__DATA__", data)
