# Golden pairs for canonical query text. Each case: a title line
#   "## <title> | same|different [| <dialect of first> <dialect of second>]"
# then the first query, a line "---", and the second query. Default dialect: spark.

## keyword case | same
SELECT a, b FROM db.t WHERE x = 1
---
select a, b from db.t where x = 1

## identifier case | same
SELECT Amount, CUSTOMER_ID FROM Shop.Orders AS O
---
SELECT amount, customer_id FROM shop.orders AS o

## quoted identifiers are case-insensitive in Spark | same
SELECT `Amount`, `id` FROM `Shop`.`Orders`
---
SELECT amount, id FROM shop.orders

## whitespace and line breaks | same
SELECT a,
       b
  FROM   db.t
 WHERE x=1
---
SELECT a, b FROM db.t WHERE x = 1

## comments | same
-- leading comment
SELECT a /* inline */, b -- trailing
FROM db.t
---
SELECT a, b FROM db.t

## trailing semicolon | same
SELECT a FROM db.t;
---
SELECT a FROM db.t

## macro variables survive as placeholders | same
SELECT a FROM db.t WHERE ds BETWEEN @start_ds AND @end_ds
---
select a from db.t where ds between @START_DS and @end_ds

## a different literal | different
SELECT a FROM db.t WHERE x = 1
---
SELECT a FROM db.t WHERE x = 2

## an added column | different
SELECT a FROM db.t
---
SELECT a, b FROM db.t

## a different table | different
SELECT a FROM db.t
---
SELECT a FROM db.u

## string literal case matters | different
SELECT a FROM db.t WHERE status = 'Open'
---
SELECT a FROM db.t WHERE status = 'open'

## column order matters | different
SELECT a, b FROM db.t
---
SELECT b, a FROM db.t

## a different macro | different
SELECT a FROM db.t WHERE ds >= @start_ds
---
SELECT a FROM db.t WHERE ds >= @end_ds

## duckdb casts transpile to spark | same | duckdb spark
SELECT x::DATE AS d, y::VARCHAR AS s FROM db.t
---
SELECT CAST(x AS DATE) AS d, CAST(y AS STRING) AS s FROM db.t

## duckdb double-quoted identifiers vs spark backticks | same | duckdb spark
SELECT "Amount" FROM "db"."T"
---
SELECT `amount` FROM db.t

## duckdb double quotes are identifiers, spark double quotes are strings | different | duckdb spark
SELECT "a" FROM db.t
---
SELECT "a" FROM db.t

## union formatting | same
SELECT a FROM db.t UNION ALL SELECT a FROM db.u
---
select a from db.t
union all
select a from db.u

## CTE names and formatting | same
WITH x AS (SELECT a FROM db.t) SELECT a FROM x
---
with X as (
  select A from DB.T
)
select a from x

## keyword-named columns quoted or not | same
SELECT `Date`, `select` FROM db.t
---
SELECT date, `SELECT` FROM db.t
