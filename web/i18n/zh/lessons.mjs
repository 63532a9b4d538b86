// lessons.mjs: the Simplified Chinese strings of the page's lessons (docs/i18n.md): the same keys as
// en/lessons.mjs, plus each lesson's own words by name (`preset.NAME.*`, zh only: their English is
// web/state/presets.mjs's). Faithful to the English captions, which are checked claims: nothing added.
// Terms as the seed articles use them (注意力, 线性注意力, 特征映射, 秩, 奇异值, 熵, 状态, 衰减, 蒸馏).
export default {
  'lessons.range': '{key} 从 {from} 到 {to}',
  'lessons.compare': ' — {label}：{value}',
  'lessons.guide.rank': '秩 = s',
  'lessons.guide.error': '误差 1（M = 0）',
  // a seed by its author before its title, as Chinese cites: 苏剑林《…》“结果分析”一节：“…”
  'cite.seed.author': '{author}{title}',
  'cite.seed.section': '“{section}”一节',
  'cite.seed.quote': '：{quote}',
  'cite.paper': '论文《{paper}》（{authors}，{year}）',
  'cite.paper.arxiv': '论文《{paper}》（{authors}，{year}），{arxiv}',
  'cite.etal': '{first} 等',
  'cite.join': '；',

  // the lessons, in web/state/presets.mjs's order
  'preset.first-look.title': '初见：softmax 注意力与线性注意力',
  'preset.first-look.compare': 'softmax 注意力',
  'preset.first-look.caption': '这里的 token 主要关注各自的邻居。softmax 注意力（其矩阵 A）保留了这条清晰的对角线；'
    + 'φ = elu+1 的线性注意力（其矩阵 M）把每一行摊得几乎均匀，所以它的行熵（row entropy）接近 ln n。'
    + '打开一课，看看这是为什么，以及每种线性变体保留了什么。',

  'preset.rank-le-d.title': '线性注意力的秩 ≤ d',
  'preset.rank-le-d.compare': 'softmax 注意力',
  'preset.rank-le-d.caption': '线性注意力是 φ(Q)φ(K)ᵀ 再把每一行除以它的和：一个 n×d 矩阵乘以一个 d×n 矩阵，所以无论序列多长，'
    + '它的秩（rank）至多是 d = 16。奇异值谱在 i = d 处断崖式下跌（虚线是上限），秩的读数是 256 中的 16。'
    + '把变体换成 softmax：乘积与归一化之间的 exp 让同样的 Q、K 几乎达到满秩。',
  'preset.rank-le-d.predict.question': '把 d 减半，从 16 减到 8。秩的读数会怎样？',
  'preset.rank-le-d.predict.choice.0': '仍接近 256：矩阵仍是 n×n',
  'preset.rank-le-d.predict.choice.1': '减半：至多为 d = 8',
  'preset.rank-le-d.predict.choice.2': '降到 1',
  'preset.rank-le-d.predict.explanation': 'd = {state.d} 时，秩的读数是 {state.n} 中的 {rank}（d = {before.state.d} 时是 {before.rank}）：'
    + 'M 是 n×d 与 d×n 矩阵的乘积，所以无论 n 多大，它的秩都以 d 为上限。',

  'preset.exp-spectrum.title': 'exp(QKᵀ) 不是低秩的',
  'preset.exp-spectrum.caption': 'QKᵀ 的秩是 d = 16：在文章的第一张图（σᵢ²，对数坐标）中，它的曲线止于 i = 16，'
    + '而 exp(QKᵀ) 的曲线一直延续到全部 256 个。在第二张图中，QKᵀ 秩为 D 的截断 SVD 从 D = d 起就是精确的；'
    + 'exp(QKᵀ) 在 D = d 时仍缺失约五分之一的能量，要 D 接近 100（d 的六倍）才缺失不到 1 %'
    + '（文章在它自己的 Q 和 K 上发现，D = 500 时误差仍然很高）。softmax 注意力的奇异值下降得很缓慢：'
    + '远多于 d 个的 σ 保持在 10⁻³·σ₁ 之上，所以没有哪个 d 维的线性注意力能重现它。',

  'preset.crossover.title': '线性时间何时划算：n 与特征维度',
  'preset.crossover.caption': 'softmax 注意力约需 n²·(d + dv) 次乘加；线性注意力先算一次 φ(K)ᵀV，再用 φ(Q) 去乘它，'
    + '约需 n·r·(d + dv) 次，其中 r 是特征维度（这里 r = d = 64）。n = 64 时两者开销相当。'
    + '拖动 n：n 小于 r 时线性路径更贵，到 1024 时便宜许多倍。',
  'preset.crossover.predict.question': 'r = d = 64 时，从多大的 n 起线性路径开始划算？',
  'preset.crossover.predict.choice.0': '从第一个 token 起：线性总是更便宜',
  'preset.crossover.predict.choice.1': '一旦 n 超过 r = 64',
  'preset.crossover.predict.choice.2': '要到 n = 4096 才行',
  'preset.crossover.predict.explanation': 'n = {state.n} 时，开销一行显示：{cost}；n = 64 时两者开销相当，'
    + 'n 小于 r 时线性路径是更贵的那个。',

  'preset.efficient-rows.title': 'Efficient Attention：行和按构造为 1',
  'preset.efficient-rows.caption': 'Efficient Attention（高效注意力）对每个查询在它的特征上做 softmax，对键的每个特征在各个位置上做 softmax，'
    + '然后相乘：M 的每一行都是若干分布的凸组合，所以完全不用除法，行和就是 1（最大的 |行和 − 1| 只是舍入误差）。'
    + '对比使用高斯 E/F 的 Linformer，它的行和可以是任意值。',

  'preset.focused-p.title': '聚焦幂次 p 让行变尖锐',
  'preset.focused-p.compare': 'p = 1',
  'preset.focused-p.caption': 'FLatten 把每个特征取 p 次幂，再重新缩放以保持其范数，这会把一个查询推向与它共有最大特征的那些键。'
    + '在聚簇的键上，把 p 从 1 拖到 8，行熵和相对 softmax 的误差一起下降。在高斯输入上（生成器），'
    + '行依然变尖锐，但偏向了错误的键：误差上升。',

  'preset.dwc-rank.title': '深度卷积把秩提升到 d 以上',
  'preset.dwc-rank.compare': '无 DWC',
  'preset.dwc-rank.caption': '单独的聚焦线性注意力，秩 ≤ d = 16。FLatten 在 V 上加了一个深度卷积（depthwise convolution，DWC），'
    + '其作用相当于给 M 加上一个 n×n 的带状矩阵：和是满秩的（取消勾选 DWC 以对比）。'
    + '带状部分的权重有正有负，所以行和不再为 1，熵的读数也就没有定义。',

  'preset.linformer-s.title': 'Linformer：秩等于 s',
  'preset.linformer-s.caption': 'Linformer 把 n 个键和值投影到 s 行（E、F 为 s × n 矩阵），所以 M = softmax(Q(EK)ᵀ)F 的秩恰好是 s：'
    + '拖动 s，秩随之变化。用分段平均的 E/F 时，各行仍是分布，误差随 s 增大缓慢下降。'
    + '随机高斯 E/F（E/F 类型）保住了秩，却保不住行：行和远离 1，相对 softmax 的误差很大。',

  'preset.performer-m.title': 'Performer：误差随 m 增大而下降',
  'preset.performer-m.caption': 'FAVOR+ 用 m 个随机特征（random features）估计 exp(q·k)，而且这个估计是无偏的：'
    + '在范数适中的输入上（标准差 0.5），相对 softmax 的误差随 m 增大而下降：m = 64 时约 0.64，256 时 0.40，'
    + '1024 时 0.22，4096 时 0.13；m 每乘以 4，误差缩小到原来的 1/1.6 到 1/1.8，比 1/√m 的 1/2 稍慢。'
    + '下方的扫描图画出 m 从 1 到 4096、特征抽取三次的结果（色带是三次之间的离散范围）；拖动 m，或重新抽取特征。',
  'preset.performer-m.predict.question': '误差大致按 1/√m 下降。要让误差减半，m 需要增大多少？',
  'preset.performer-m.predict.choice.0': '翻一倍，到 m = 512',
  'preset.performer-m.predict.choice.1': '四倍，到 m = 1024',
  'preset.performer-m.predict.choice.2': '十六倍，到 m = 4096',
  'preset.performer-m.predict.explanation': 'm = {state.m} 时误差是 {error_fro_rel}，而 m = {before.state.m} 时是 {before.error_fro_rel}：'
    + '特征数变为四倍，误差缩小为 1/√4 = 1/2（ω 只抽取了一次，所以不恰好是一半）。',

  'preset.performer-norm.title': '大范数输入上的 Performer',
  'preset.performer-norm.caption': 'FAVOR+ 的方差按 exp(‖q‖² + ‖k‖²) 增长：标准差为 1.5 时，即使 m = 4096，误差仍接近 1，'
    + '增加特征几乎无济于事。所有键共用一个全局的稳定项，还使大多数键的每个指数项都低于 φ 内的 ε：'
    + '这些键从每个查询得到相同的权重（见变体下方的说明）。',

  'preset.taylor-order.title': '泰勒特征：阶数越高越准，却比 softmax 更贵',
  'preset.taylor-order.caption': 'exp(q·k) = Σ (q·k)ʳ/r! 是一个特征维度为 Σ dʳ 的线性注意力。提高阶数会降低相对 softmax 的误差，'
    + '但阶数为 3、d = 8 时，特征已有 585 个，多于 n = 256 个 token：这条“线性”路径比 softmax 更贵（见开销一行）。',

  'preset.explimit-N.title': '(1 + q·k/N)^N 趋于 exp(q·k)',
  'preset.explimit-N.caption': '(1 + x/N)^N 趋于 eˣ，所以 (1 + q·k/N)^N 是一个线性注意力，它的特征维度为 (d + 1)^N，'
    + '随 N 增大而逼近 softmax：拖动 N，误差下降。N = 3 时 729 个特征就已多于 token 数，N = 8 时则有 4300 万个：'
    + 'softmax 注意力是一个无限维的线性注意力。',

  'preset.hedgehog-spiky.title': 'Hedgehog 的 exp 特征是尖锐的',
  'preset.hedgehog-spiky.compare': '线性注意力（elu+1）',
  'preset.hedgehog-spiky.caption': 'Hedgehog 把 x 映射为 [exp(Wᵀx), exp(−Wᵀx)]，保留了指数函数的尖锐性（spikiness）：'
    + '在聚簇的键上，它的行比 elu+1 的集中得多（行熵更低，占一行 90% 的键更少），而 elu+1 的行几乎保持均匀。'
    + '把变体换成 elu+1 来对比。这里 W = I；论文通过蒸馏学习 W。',

  'preset.sink.title': '注意力汇聚（attention sink）',
  'preset.sink.caption': '这里的查询被构造成与 token 0 匹配，softmax 注意力（其矩阵 A）平均把一行 0.74 的权重给了第一列：'
    + '这就是注意力汇聚（attention sink）。elu+1 的线性注意力（其矩阵 M）没有指数函数来放大这种匹配，只给它 0.02，'
    + '仅略高于其他键（0.012 到 0.018）。试试各个变体：Nyströmformer 用 16 个地标点（landmarks）的行和列重建 softmax'
    + '（少于 64 个 token，所以并不精确：误差约 0.3），保住了汇聚；各种特征映射则失去了它。',

  'preset.decay-halflife.title': '衰减：会遗忘的状态',
  'preset.decay-halflife.compare': 'γ = 1',
  'preset.decay-halflife.caption': '每次写入前把状态乘以一个固定的 γ（RetNet、Lightning Attention；Mamba-2 和 Gated DeltaNet '
    + '让 γ 取决于输入），一个键的权重就每 ln ½ / ln γ 个 token 减半：γ = 0.8 时为 3.1 个 token。'
    + '现在每一行主要看它最近的过去，所以行熵下降（这里约 2.3，γ = 1 时为 4.5）。递归携带的状态大小不变，'
    + '为 r × dv = 16 × 16 个数；下降的是前半段交给后半段的那部分的数值秩（即半可分秩（semiseparable rank）：'
    + '这里是 8，γ = 1 时是 d = 16），因为远在中点之前的写入已衰减到秩的容差以下。把 γ 拖向 1，两者都会恢复。',

  'preset.window-rank.title': '滑动窗口：满秩，状态却只有 W − 1',
  'preset.window-rank.caption': '只对最近 W = 8 个键做 softmax，得到的是一个带状矩阵：几乎满秩（见秩的读数），'
    + '但前半段交给后半段的左下块只有 W − 1 = 7 条对角线，所以它的秩，即半可分秩（semiseparable rank），恰好是 7。'
    + '秩和状态大小是两回事：窗口作为 W 个键的缓存来运行很便宜，尽管没有任何低秩分解能重现它。',
  'preset.window-rank.predict.question': '把窗口从 W = 8 加宽到 W = 32。半可分秩会怎样？',
  'preset.window-rank.predict.choice.0': '保持 7：它由 d 决定',
  'preset.window-rank.predict.choice.1': '增长约四倍，至多为 W − 1 = 31',
  'preset.window-rank.predict.choice.2': '下降：更宽的窗口更平滑',
  'preset.window-rank.predict.explanation': 'W = {state.window} 时半可分秩是 {semiseparable_rank}'
    + '（W = {before.state.window} 时是 {before.semiseparable_rank}），至多为 W − 1 = 31：带状区域最远的角上权重低于秩的容差。'
    + '秩是 {state.n} 中的 {rank}（之前是 {before.rank}）：两种情况都接近满秩。随 W 增长的是窗口传下去的状态，而不是矩阵的秩。',

  'preset.delta-vs-linear.title': 'delta 规则覆盖，线性注意力混合',
  'preset.delta-vs-linear.caption': '线性注意力把每个 k vᵀ 都加进状态，所以方向相同的键会冲突，它们的值混在一起。'
    + 'delta 规则先减去状态对这个键返回的值，再写入：η = 1 时，重复的键返回它最新的值，'
    + '而且每次写入都把自己的键从之前写入的内容中投影掉，所以半可分秩是 d − 1 = 15。'
    + '换成 retention 并把 γ 设为 1（它自己的默认值是 1 − 2⁻⁵）：就是同样的键上未归一化的普通线性注意力，'
    + '秩为 d = 16，各行叠加了之前所有的值。',

  'preset.retention-signed.title': 'Retention：未归一化、有正有负的矩阵',
  'preset.retention-signed.caption': 'Retention 去掉了行归一化：对角线以下 M = (β·QKᵀ) ⊙ γ^(i−j)。它的权重有正有负'
    + '（发散配色：低于 0 为蓝，高于 0 为红），行和不为 1；因为各行不是分布，熵和“占一行 90% 的键数”的读数都没有定义。'
    + '衰减 γ = 1 − 2⁻⁵（RetNet 的第一个头）让带状区域离对角线越远越淡。',

  'preset.recurrent-state.title': '取代缓存的状态',
  'preset.recurrent-state.caption': '因果线性注意力是一个递归：每个 token 把 φ(k)vᵀ 加进一个由 r × dv 个数组成的状态 S，'
    + '并读出 o = Sᵀφ(q) / φ(q)·z。逐个 token 步进：状态大小不变，而 softmax 的键值缓存（KV cache）每个 token 增长一行；'
    + '每一行输出都等于加了因果掩码（causal mask）的矩阵的对应行，只差浮点舍入。',

  'preset.crossover-measured.title': '实测：只有 n > d 时线性才划算',
  'preset.crossover-measured.caption': '二次路径约需 n²·d 次运算和 n² 的内存，线性路径约需 n·d² 次运算和一个 d × d 的状态，'
    + '所以只有当 n 超过特征维度（这里 r = d = 64）时线性路径才胜出。后台线程在这个浏览器里随 n 增长为两者计时；'
    + '二次路径在它的 n × n 矩阵将超出内存预算处停下。',

  'preset.memory-collisions.title': '固定大小的状态会冲突',
  'preset.memory-collisions.caption': '把 N 个键→值对写进一个线性状态 S = Σ k vᵀ，键的维度为 d = 32（“记忆冲突”视图自己的键维度），'
    + '再逐个读回每个键：其他键值对会带来大小为 √((N − 1)/d) 的噪声，所以 N 接近 d 时回忆就失败了。'
    + '对存下的键值对做 softmax，只要缩放足够尖锐，就能回忆远多于 d 个键值对：它的记忆随 N 增长。',
  'preset.memory-collisions.predict.question': '把状态加倍，从 d = 32 到 d = 64。N = 512 时线性状态的误差会怎样？',
  'preset.memory-collisions.predict.choice.0': '减半',
  'preset.memory-collisions.predict.choice.1': '缩小为 1/√2，约降 30 %',
  'preset.memory-collisions.predict.choice.2': '不变：状态已经满了',
  'preset.memory-collisions.predict.explanation': 'd = {state.mem_d} 时，线性状态在 N = {state.pairs} 处的误差是 {recall_linear}，'
    + '而 d = {before.state.mem_d} 时是 {before.recall_linear}：其他键值对的噪声是 √((N − 1)/d)，所以维度加倍只把它除以 √2。'
    + '对存下的键值对做 softmax：{recall_softmax}（之前是 {before.recall_softmax}）。',

  'preset.delta-overwrite.title': 'delta 规则覆盖写入',
  'preset.delta-overwrite.caption': 'delta 规则在写入前先读出状态中这个键对应的内容，只写入差值：写了两次的键返回它最新的值 v′，'
    + '而线性状态返回的是混合 v + v′。写入强度 η = 1 时，它在每个 N 上都胜过线性状态。',

  'preset.hedgehog-distill.title': 'Hedgehog 学习模仿 softmax',
  'preset.hedgehog-distill.caption': 'Hedgehog 的特征 exp(±Wᵀx) 可以训练：Adam 在后台线程里实时降低 softmax 与 Hedgehog '
    + '在这组 Q、K 上的注意力之间的平均行 KL，几百步之内就远远胜过 elu+1 和 Performer。它在同一组 Q、K 上训练和评分，'
    + '所以这是拟合，不是检验：按“在实验室中使用这个 W”，再改变生成器的随机种子，'
    + '同一个 W 在同类的新 Q、K 上得到约 0.5 的 KL，好于 W = I（1.1）和 elu+1（1.4），但不如 Performer（0.3）。'
    + '论文在训练数据上蒸馏，在留出的数据上检验。',

  'preset.mamba2.title': '把 Mamba-2 看作门控线性注意力',
  'preset.mamba2.caption': 'Mamba-2 的 SSD 层就是换了名字的简单门控线性注意力（simple GLA）：查询是 C，键是 Δ·B，对数门是 A·Δ，缩放为 1'
    + '（这里是 4 × 1/√16；跳连 D·x 不属于 M）。Δ_t 来自输入（一个带种子的投影，投影为 0 处 Δ = 0.05，A = −1），'
    + '所以每个 token 按自己的 α_t = exp(A·Δ_t) 遗忘，在热力图下方的门控条中约从 0.7 到 1。无论门怎样变，状态都是 d × d：'
    + '半可分秩（semiseparable rank）保持为 d = 16，而 M 本身是满秩的。',

  'preset.rwkv7.title': 'RWKV-7：对角衰减加一个秩一的擦除',
  'preset.rwkv7.compare': 'a = b = 0（即 GLA）',
  'preset.rwkv7.caption': 'RWKV-7 就是 dplr：S_t = (diag(α_t) + b_t a_tᵀ) S_{t−1} + k_t v_tᵀ，其中 a = −κ̂（κ̂ = k/‖k‖），'
    + 'b = κ̂ ⊙ a_icl，缩放为 1，每个通道的衰减在 RWKV-7 的范围内（α 从 0.55 到 1）。每次写入之前，这个秩一项按比例 '
    + 'a_icl = 0.5 擦去状态沿 κ̂ 的部分：一种减弱了的 delta 规则（当 a_icl = 1、门敞开且键经过归一化时，它就是 η = 1 的 '
    + 'Gated DeltaNet）。状态仍是 d × d：半可分秩（semiseparable rank）至多为 16。',

  'preset.forget-sentences.title': '在句末遗忘：一次重置让 M 变成分块对角',
  'preset.forget-sentences.compare': '不重置',
  'preset.forget-sentences.caption': 'Gated DeltaNet 的门一直敞开（α = 1），只在五个 token 处重置：在这样的 token '
    + '写入之前状态被清空，就像一个在每个句末遗忘的模型。M 分成一块一块，每“句”一块；中间的 token 处有一次重置，'
    + '前半段的任何东西都到不了后半段：半可分秩为 0（没有重置时为 16 = d）。载入模型的文本后，门控条下方的'
    + '“在句末之后重置”会在它的句子处这样做。',

  'preset.gate-vs-decay.title': '由数据决定的门，对比固定衰减',
  'preset.gate-vs-decay.compare': '不重置（γ = 1）',
  'preset.gate-vs-decay.caption': '由数据决定的门比固定衰减多给了什么？这里的 Gated DeltaNet 让门一直敞开（α = 1），'
    + '只在 token 64、128 和 192 处关上（对数门 −30）：段内没有任何衰减，也没有任何东西能越过重置。'
    + '中间 token 处的重置把 M 切成两半，所以半可分秩（前半段交给后半段的那一块的秩）为 0。'
    + '论文把两种机制放在一起：门快速擦除记忆，delta 规则有针对性地更新记忆。',
  'preset.gate-vs-decay.predict.question': '把三次重置换成一个均值 α 相同的常数衰减：每个 token 都是 0.988（253 个 token 为 1，三个为 0，除以 256）。这时中间 token 处的半可分秩是多少？',
  'preset.gate-vs-decay.predict.choice.0': '仍是 0：同样的遗忘，只是均匀摊开',
  'preset.gate-vs-decay.predict.choice.1': '回到 d = 16：常数衰减从不切断',
  'preset.gate-vs-decay.predict.choice.2': '约为 d 的一半，8',
  'preset.gate-vs-decay.predict.explanation': '每个 token 都是 γ = {state.decay} 时，半可分秩为 {semiseparable_rank}'
    + '（有重置时是 {before.semiseparable_rank}）：小于 1 的衰减让越过中点的部分每个 token 缩小 γ 倍，却永远不会变成零，'
    + '即使 γ = 0.9 它也仍是 16。只有在某个 token 上关上的门才会在那里切断 M。',

  'preset.channel-gates.title': '每个通道一个门（KDA），对比每个 token 一个门（Gated DeltaNet）',
  'preset.channel-gates.compare': 'Gated DeltaNet（每个 token 一个门）',
  'preset.channel-gates.caption': 'Kimi Delta 注意力（KDA）就是每个键通道各有一个门的 Gated DeltaNet；这里的门在 α = 0.3 和 1 之间缓慢摆动'
    + '（周期 64 个 token 的余弦），每个通道相位不同，而作为对比的 Gated DeltaNet 在同样的输入上只读第一个通道的门。'
    + '只有一个门时，门一落下所有通道同时遗忘，前半段能传到后半段的很少（半可分秩为 2）；每个通道一个门时，一些通道敞开而另一些在遗忘，'
    + '能传过去的更多（9，至多 16）。更多本身并不等于更好：两者相对 softmax 的误差相同（0.74），而用 fla 的 GLA 投影'
    + '（gate=projection，α 从 0.78 到 1）时两者相差不到 0.1 %。《Kimi Linear》主张使用更细的、按通道的门。',

  'preset.fox-window.title': 'FoX 平滑地遗忘，窗口则一刀切',
  'preset.fox-window.compare': 'softmax，窗口 W = 16',
  'preset.fox-window.caption': '遗忘 Transformer（FoX）保留 softmax，再加一个遗忘门：每个 token 的对数门（这里来自 fla 对键的投影，'
    + 'α 从 0.84 到 0.997）压低它之前每个键的分数。作为对比的滑动窗口（只对最近 W = 16 个键做 softmax）靠切断来遗忘：'
    + '更早的键得不到权重，半可分秩至多为 W − 1。FoX 按门的要求遗忘多少就是多少：一行 90 % 的权重落在约 31 个键上'
    + '（窗口为 10），半可分秩保持很高（90，至多 128），相对因果 softmax 的误差也更低（0.90 对 1.55）。'
    + '它和 softmax 一样在缓存中保留所有键；窗口只保留 W 个。',

  'preset.story-breaks.title': '每个头都换成 elu+1，故事就崩了',
  'preset.story-breaks.caption': 'stories260K 是一个真实的模型：5 层、每层 8 个头，每个头的维度 d = 8。这里把它 40 个头的 softmax '
    + '全部换成 elu+1，两个模型读同一个示例句子。下一个 token 的平均损失从 0.55 升到 2.58 nats，两者预测的最可能的下一个 token '
    + '只在约一半的位置上一致（0.53）。贪心生成的文本说明了这一点：在示例句子之后，原模型接着写出通顺的下一句，'
    + '替换后的模型只写出重复的碎片，从第一个 token 起就不同（面板中两段续写并排，已标出）。',

  'preset.distill-recovers.title': '蒸馏后的 Hedgehog 头找回了大部分损失',
  'preset.distill-recovers.caption': '全部 40 个头换成 W = I 的 Hedgehog 特征 exp(±Wᵀx) 时，比 elu+1 更差：在示例句子上损失为 4.31 nats，'
    + 'elu+1 为 2.58，原模型为 0.55。按“蒸馏”：每个头的 W 训练 100 步，在训练文本（面板里另一个故事）上模仿它自己的 softmax；'
    + '在训练从未见过的示例句子上，损失降到 1.35：W = I 损失的 3.76 nats 找回了五分之四。'
    + '蒸馏后的模型也胜过 elu+1（1.35 对 2.58），但仍明显高于原模型。',

  'preset.head-sensitivity.title': '有些头比别的头更重要',
  'preset.head-sensitivity.caption': '按“计算敏感度图”：每次只把一个头、再每次只把一层换成 elu+1，其余保持不变。'
    + '在示例句子上，单独一个头的代价都不大：最差的第 4 层第 4 个头增加 0.04 nats，最温和的第 4 层第 6 个头让损失降低 0.01，'
    + '40 个头中有 16 个让损失略有降低。单独替换时第 3 层代价最大，约为第 1 层的八倍。'
    + '然而 40 个头一起替换代价是 2.03 nats，远大于各头单独代价之和（0.17）：每个被替换的头都改变了后面各层读到的东西。',

  'preset.window-plus-linear.title': '精确分数的窗口，加上线性的其余部分',
  'preset.window-plus-linear.caption': 'LoLCATs 让每个查询最近 W = 8 个分数保持精确（softmax），对更早的键用一个线性项，即 Hedgehog 映射。'
    + '按“蒸馏”：在窗口保留的情况下，把每个头的映射训练 100 步。在示例句子上，损失降到 0.552，原模型为 0.549，KL 为 0.05；'
    + '而单独蒸馏的线性映射（上一课）停在 1.35，elu+1 为 2.58。只用窗口（变体 softmax，窗口 8）时为 0.57，KL 0.09：'
    + '线性的其余部分仍补上了窗口漏掉的东西。',
};
