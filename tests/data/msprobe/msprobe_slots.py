# msprobe's own read_op (python/msprobe/core/compare/utils.py at 8ff00da), run on a dump.json:
# the compare row names, as slots after the entry's name.
import ast, json, sys, zlib, types
import numpy as np
# usage: msprobe_slots.py MSPROBE_CHECKOUT DUMP_JSON OUT_TXT
src = sys.argv[1] + '/python/msprobe/core/'
const_ns = {}
cs = open(src + 'common/const.py').read()
tree = ast.parse(cs)
keep = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in ('Const', 'CompareConst')]
mod = ast.Module(body=[ast.Import(names=[ast.alias('os')]), ast.Import(names=[ast.alias('stat')]), ast.Import(names=[ast.alias('numpy', 'np')])] + keep, type_ignores=[]); ast.fix_missing_locations(mod)
exec(compile(mod, 'const', 'exec'), const_ns)
us = open(src + 'compare/utils.py').read()
tree = ast.parse(us)
fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ('read_op', 'op_item_parse', 'is_p2pop_leaf_data', 'is_leaf_data', 'gen_op_item')]
ns = dict(Const=const_ns['Const'], CompareConst=const_ns['CompareConst'], np=np, zlib=zlib,
          logger=types.SimpleNamespace(error=print), CompareException=Exception)
m2 = ast.fix_missing_locations(ast.Module(body=fns, type_ignores=[])); exec(compile(m2, 'utils', 'exec'), ns)
d = json.load(open(sys.argv[2]))
out = {}
rows = 0
for name, e in d['data'].items():
    items = ns['read_op'](e, name)
    out[name] = [it['full_op_name'][len(name) + 1:] if it['full_op_name'].startswith(name + '.') else '!' + it['full_op_name'] for it in items]
    rows += len(items)
print(rows, 'rows')
with open(sys.argv[3], 'w') as f:
    for name, slots in out.items():
        f.write(name + '\t' + ' '.join(slots) + '\n')
