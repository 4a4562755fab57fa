-- A merchant holds balances in at most 1,000 currencies (docs/money.md, "Currencies"). The contract's
-- GET /api/getBalance lists every currency a merchant ever had an entry in, unpaged, and the viewer
-- renders them all: a merchant that made deposits in 20,000 made-up currency codes (3-10 of A-Z0-9)
-- got a 1.7 MB answer taking 60 ms to build, and reading it in 16 loops made another merchant's
-- creates wait a second at the median. Bounding the currencies bounds that read.
--
-- Hand-written: schema.prisma cannot express triggers (Prisma's diff ignores them).
--
-- The trigger fires only for a balance row actually inserted, that is, a merchant's first use of a
-- currency (a deposit or withdraw created in it, or an operator's command naming it); an
-- INSERT ... ON CONFLICT DO UPDATE that finds the row fires no AFTER INSERT trigger, so a create in
-- a currency the merchant already holds calls nothing. It locks the merchant's row FOR NO KEY
-- UPDATE, which foreign-key checks (FOR KEY SHARE) do not wait for, so two first uses of new
-- currencies by one merchant take turns and the count is exact under any concurrency, while its
-- other writes go on. The count reads at most 1,001 rows through the primary key. SQLSTATE 23L01
-- is in class 23 (integrity constraint violation): a batched create refused for one row's sake is
-- written again row by row, so only that create is refused (apps/transactions-svc/src/domain/
-- currency-cap.ts).
CREATE FUNCTION "balances_currency_cap"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held integer;
BEGIN
  PERFORM 1 FROM merchants WHERE id = NEW.merchant_id FOR NO KEY UPDATE;
  SELECT count(*) INTO held FROM (SELECT 1 FROM balances WHERE merchant_id = NEW.merchant_id LIMIT 1001) b;
  IF held > 1000 THEN
    RAISE EXCEPTION 'merchant % already holds balances in 1000 currencies; % would be one more', NEW.merchant_id, NEW.currency
      USING ERRCODE = '23L01', HINT = 'currency_cap';
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "balances_currency_cap" AFTER INSERT ON "balances"
  FOR EACH ROW EXECUTE FUNCTION "balances_currency_cap"();
