"""The table of README.md from clock_loads.json and clock_smi.csv: per load, the nvidia-smi samples
from 300 ms after its start to its end; median SM clock (MHz), power (W), samples with the software
power cap active, and the rate per clock per SM at the median clock. Run in this folder."""
import json
import pandas as pd
d=json.load(open('clock_loads.json'))
s=pd.read_csv('clock_smi.csv',skipinitialspace=True)
s.columns=[c.strip() for c in s.columns]
s['t']=pd.to_datetime(s['timestamp'],format='%Y/%m/%d %H:%M:%S.%f').dt.tz_localize('UTC')
clk=[c for c in s.columns if c.startswith('clocks.current.sm')][0]; pw=[c for c in s.columns if c.startswith('power.draw')][0]
cap=[c for c in s.columns if 'sw_power_cap' in c][0]
sms=d['gpu_sms']
for l in d['loads']:
    t0=pd.Timestamp(l['start_utc'])+pd.Timedelta('300ms'); t1=pd.Timestamp(l['end_utc'])
    w=s[(s.t>=t0)&(s.t<=t1)]
    mhz=w[clk].median()
    per=l['rate']*1e12/(sms*mhz*1e6)
    print(f"{l['load']:36s} {l['rate']:7.1f} {l['unit']:7s} n={len(w):3d} clk {mhz:5.0f} [{w[clk].min()}-{w[clk].max()}] P {w[pw].median():5.0f} max {w[pw].max():5.0f} cap {(w[cap]=='Active').sum()}/{len(w)} op/clk/SM {per:5.0f} T {w['temperature.gpu'].max()} {(t1-t0).total_seconds():.2f}s")
