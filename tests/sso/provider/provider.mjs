// A real OpenID Connect provider (oidc-provider, an OpenID-certified implementation) for tests/sso.
//
// Started by the `oidc_provider` fixture: `node provider.mjs <port> <config.json>`. It prints
// `READY <issuer>` once listening. The config names the client (id, secret, redirect URIs) and the
// accounts (sub -> claims). What is ours here is only what oidc-provider leaves to the application:
//
// * the interaction (sign-in) page: GET /interaction/:uid shows a form, POST /interaction/:uid/login
//   signs the named account in (no password: test accounts), as a user typing in a form would;
// * consent is skipped for the configured (first-party) client, oidc-provider's documented recipe;
// * a test control, POST /__test/next_id_token?mode=expired|badsig|nonce|iss, which makes the next
//   token response carry an ID token an attacker or a broken provider could send: re-signed with an
//   exp in the past, signed by a key the provider does not publish (same kid), or with another nonce
//   or issuer. The service must refuse each one.
import fs from 'node:fs';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const port = Number(process.argv[2]);
const config = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const issuer = `http://127.0.0.1:${port}`;

const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
const signingJwk = { ...(await jose.exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
const { privateKey: rogueKey } = await jose.generateKeyPair('RS256', { extractable: true });

const accounts = config.accounts; // { sub: {claims...} }
let nextMode = null;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: config.client_id,
      client_secret: config.client_secret,
      redirect_uris: config.redirect_uris,
      post_logout_redirect_uris: config.post_logout_redirect_uris || [],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingJwk] },
  cookies: { keys: ['test-cookie-key-not-a-secret'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
    groups: ['groups'],
  },
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: true },
  },
  pkce: { required: () => true },
  ttl: { IdToken: 3600, AccessToken: 3600, AuthorizationCode: 60, Session: 3600, Interaction: 600, Grant: 3600 },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, sub) {
    if (!accounts[sub]) return undefined;
    return { accountId: sub, async claims() { return { sub, ...accounts[sub] }; } };
  },
  async loadExistingGrant(ctx) {
    // first-party client: consent is implied (oidc-provider's "skip consent" recipe)
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile groups');
    await grant.save();
    return grant;
  },
});

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function resign(idToken, mode) {
  const claims = jose.decodeJwt(idToken);
  const now = Math.floor(Date.now() / 1000);
  let key = privateKey;
  if (mode === 'expired') { claims.iat = now - 7200; claims.exp = now - 3600; }
  if (mode === 'nonce') claims.nonce = 'not-the-nonce-that-was-sent';
  if (mode === 'iss') claims.iss = 'https://impostor.invalid';
  if (mode === 'badsig') key = rogueKey;
  return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid }).sign(key);
}

provider.use(async (ctx, next) => {
  const match = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (ctx.path === '/__test/next_id_token' && ctx.method === 'POST') {
    nextMode = ctx.query.mode || null;
    ctx.body = { mode: nextMode };
    return;
  }
  if (match && ctx.method === 'GET' && !match[2]) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    ctx.type = 'html';
    ctx.body = `<form method="post" action="/interaction/${details.uid}/login"><input name="login"><button>Sign in</button></form>`;
    return;
  }
  if (match && ctx.method === 'POST' && match[2]) {
    const form = await readForm(ctx.req);
    const login = form.get('login');
    if (!accounts[login]) {
      ctx.status = 400;
      ctx.body = 'unknown account';
      return;
    }
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return;
  }
  await next();
  if (ctx.path === '/token' && nextMode && ctx.body && ctx.body.id_token) {
    const mode = nextMode;
    nextMode = null;
    ctx.body = { ...ctx.body, id_token: await resign(ctx.body.id_token, mode) };
  }
});

provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`READY ${issuer}\n`);
});
