// The image's end-to-end smoke, through the gateway of the four containers that test-image.sh
// started: a merchant (created by the image's own CLI) sets its deposit callback URL to a receiver
// here, creates a deposit, gets the signed callbacks (verified with the merchant's secret, as
// docs/callbacks.md tells merchants to), and finds the transaction in the viewer's JSON.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const gateway = process.env.GATEWAY;
const merchant = JSON.parse(process.env.MERCHANT);
const deadline = Date.now() + 60_000;

function fail(message) {
  console.error(`smoke: FAILED: ${message}`);
  process.exit(1);
}

const received = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    try {
      const event = new Webhook(merchant.callbackSigningSecret).verify(body, req.headers);
      received.push(event);
      res.writeHead(200).end();
    } catch (error) {
      received.push({ forged: String(error) });
      res.writeHead(400).end();
    }
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/deposits`;

const headers = { serviceApiToken: merchant.apiToken, 'content-type': 'application/json' };
const put = await fetch(`${gateway}/api/updateCallbackUrlDeposit`, { method: 'PUT', headers, body: JSON.stringify({ url: receiverUrl }) });
if (put.status !== 200) fail(`updateCallbackUrlDeposit answered ${put.status}: ${await put.text()}`);

const create = await fetch(`${gateway}/api/createDeposit`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ amount: '100.50', currency: 'USD', orderId: `image-${Date.now()}` }),
});
const created = await create.json();
if (create.status !== 201) fail(`createDeposit answered ${create.status}: ${JSON.stringify(created)}`);
console.log(`smoke: created ${created.id} (201)`);

// pending at creation, then the sandbox settler completes it.
while (!received.some((e) => e.type === 'deposit.completed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
if (received.some((e) => e.forged)) fail(`a callback's signature did not verify: ${JSON.stringify(received)}`);
const types = received.filter((e) => e.data?.id === created.id).map((e) => e.type);
if (!types.includes('deposit.pending') || !types.includes('deposit.completed')) fail(`callbacks received: ${JSON.stringify(types)}`);
console.log(`smoke: callbacks signed and verified: ${types.join(', ')}`);

const view = await fetch(`${gateway}/ui/viewTransaction?limit=5`, { headers: { serviceApiToken: merchant.apiToken, accept: 'application/json' } });
const page = await view.json();
const row = JSON.stringify(page).includes(created.id);
if (view.status !== 200 || !row) fail(`viewer answered ${view.status} without ${created.id}: ${JSON.stringify(page).slice(0, 500)}`);
console.log('smoke: the viewer lists it');
receiver.close();
