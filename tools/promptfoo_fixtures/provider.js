/**
 * A stand-in "model" for promptfoo fixtures: routes a support ticket to a queue, right or
 * wrong at random, and sometimes fails.
 *
 * Every draw is a pure function of (seed, model, skill, error rate, prompt label, the test's
 * vars, repeat index), so the outcome of a row does not depend on promptfoo's concurrency or
 * call order, and two runs with the same seed and config give the same pass / fail / error
 * rows (ids, times and row order differ). The seed comes from PF_FIX_SEED, else config.seed.
 *
 * config: model (name stamped on outputs), skill (chance of the right queue), error_rate
 * (chance of a failed call: half thrown, half returned as {error}), and prompt_bonus
 * (skill added per prompt label). Skill and error rate arrive as strings when they are
 * rendered from env templates in promptfooconfig.yaml, hence Number().
 *
 * Caching: successful answers go through the cache promptfoo hands to providers
 * (context.getCache), keyed on everything that decides the answer. promptfoo namespaces
 * that cache per repeat and swaps in a memory-only cache under --no-cache, so only runs
 * with the cache on replay earlier answers, marked `cached: true` as promptfoo's own
 * providers do. Errors are never cached.
 */
'use strict';

const crypto = require('node:crypto');

/** A uniform draw in [0, 1) from the SHA-256 of the given parts. */
function draw(...parts) {
  const digest = crypto.createHash('sha256').update(parts.join('\u241f')).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** JSON with sorted keys, so that vars hash the same whatever their order. */
function stableJson(value) {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

class FixtureRouter {
  constructor(options = {}) {
    this.providerId = options.id || 'fixture-router';
    this.config = options.config || {};
  }

  id() {
    return this.providerId;
  }

  async callApi(prompt, context = {}) {
    const cfg = this.config;
    // promptfoo merges per-step vars (__evalId, __evalStepId, __repeatIndex) into
    // context.vars; they differ between runs, so they stay out of the draws and the key.
    const vars = Object.fromEntries(
      Object.entries(context.vars || {}).filter(([name]) => !name.startsWith('__')),
    );
    const promptLabel = (context.prompt && context.prompt.label) || '';
    const repeatIndex = context.repeatIndex || 0;
    const seed = process.env.PF_FIX_SEED || String(cfg.seed ?? 1);
    const model = String(cfg.model || this.providerId);
    const bonus = Number((cfg.prompt_bonus || {})[promptLabel] || 0);
    const skill = Math.min(1, Number(cfg.skill ?? 0.7) + bonus);
    const errorRate = Number(cfg.error_rate ?? 0);
    const key = [seed, model, skill, errorRate, promptLabel, stableJson(vars), repeatIndex];

    const cache = typeof context.getCache === 'function' ? await context.getCache() : null;
    const cacheKey = `relidash-fixture:${crypto.createHash('sha256').update(key.join('|')).digest('hex')}`;
    if (cache) {
      const hit = await cache.get(cacheKey);
      if (hit) return { ...hit, cached: true };
    }

    const failure = draw(...key, 'error');
    if (failure < errorRate) {
      const message = `${model}: simulated provider failure (seeded draw ${failure.toFixed(3)})`;
      if (failure < errorRate / 2) throw new Error(message);
      return { error: message };
    }

    const right = draw(...key, 'answer') < skill;
    const output = right ? String(vars.answer) : String(vars.wrong || 'general');
    const promptTokens = Math.ceil(prompt.length / 4);
    const completionTokens = Math.ceil(output.length / 4) + 1;
    const response = {
      output,
      tokenUsage: {
        prompt: promptTokens,
        completion: completionTokens,
        total: promptTokens + completionTokens,
        numRequests: 1,
      },
      cost: (promptTokens + completionTokens) * 1e-6,
    };
    if (cache) await cache.set(cacheKey, response);
    return response;
  }
}

module.exports = FixtureRouter;
